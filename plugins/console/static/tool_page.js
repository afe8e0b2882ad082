// The tool page: the generated form, the call (progress, cancel), and its result.
"use strict";

(() => {
  const data = JSON.parse(document.getElementById("tool-data").textContent);
  const spec = data.spec;
  const csrf = document.querySelector('meta[name="csrf-token"]').content;
  const form = SchemaForm.build(document.getElementById("form-fields"), spec.input_schema, data.ui_schema);
  const button = document.getElementById("call-button");
  const cancel = document.getElementById("cancel-button");
  const status = document.getElementById("call-status");
  const progress = document.getElementById("call-progress");
  const progressText = document.getElementById("progress-text");
  const resultBox = document.getElementById("result");
  let current = null;

  document.querySelectorAll("[data-example]").forEach((node) => {
    node.addEventListener("click", () => {
      form.set(spec.examples[Number(node.dataset.example)].input);
      form.clear();
      document.getElementById("call-form").scrollIntoView({ behavior: "smooth" });
    });
  });

  function post(url, body) {
    return fetch(url, {
      method: "POST", credentials: "same-origin",
      headers: { "content-type": "application/json", "x-console-csrf": csrf },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  }

  function running(on) {
    button.disabled = on;
    cancel.hidden = !on;
    if (!on) { progress.hidden = true; }
  }

  async function follow(id) {
    while (current === id) {
      const answer = await fetch(`/api/calls/${encodeURIComponent(id)}`, { credentials: "same-origin" });
      if (!answer.ok) { status.textContent = `lost the call (${answer.status})`; running(false); return; }
      const call = await answer.json();
      if (call.progress) {
        progress.hidden = false;
        if (call.progress.total) { progress.max = call.progress.total; progress.value = call.progress.progress; } else { progress.removeAttribute("value"); }
        progressText.textContent = [call.progress.total ? `${call.progress.progress} / ${call.progress.total}` : `${call.progress.progress}`, call.progress.message].filter(Boolean).join(" · ");
      }
      if (call.status !== "running") {
        running(false);
        status.textContent = call.status;
        if (call.result) {
          ResultView.render(resultBox, call.result, { detailHref: `/calls/${encodeURIComponent(id)}` });
          const error = call.result.error;
          if (error && error.code === "invalid_arguments" && error.details && Array.isArray(error.details.issues)) {
            form.show(error.details.issues);
          }
        } else {
          resultBox.replaceChildren(Object.assign(document.createElement("p"), { className: "muted", textContent: "The call was cancelled." }));
        }
        current = null;
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
  }

  document.getElementById("call-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const { value, issues } = form.validate();
    if (issues.length) { form.show(issues); status.textContent = "fix the highlighted fields"; return; }
    form.clear();
    resultBox.replaceChildren();
    progressText.textContent = "";
    status.textContent = "calling…";
    running(true);
    const answer = await post(`/api/tools/${encodeURIComponent(spec.name)}/calls`, { arguments: value || {} });
    const body = await answer.json().catch(() => ({}));
    if (answer.status === 422 && body.issues) { form.show(body.issues); status.textContent = "fix the highlighted fields"; running(false); return; }
    if (!answer.ok) { status.textContent = body.error || `refused (${answer.status})`; running(false); return; }
    current = body.id;
    follow(body.id);
  });

  cancel.addEventListener("click", async () => {
    if (!current) return;
    status.textContent = "cancelling…";
    await post(`/api/calls/${encodeURIComponent(current)}/cancel`);
  });
})();
