// Renders a ToolResult: every MCP content block, the structured content as folded JSON, errors with their hints.
"use strict";

const ResultView = (() => {
  const el = DomElement.el;

  // A JSON value as a tree of <details>: the first level open, deeper levels folded.
  function jsonTree(value, depth = 0, key = null) {
    const label = key === null ? null : el("span", { className: "json-key", text: `${key}: ` });
    if (value !== null && typeof value === "object") {
      const entries = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
      const summary = el("summary", {}, label, el("span", { className: "json-count",
        text: Array.isArray(value) ? `[${entries.length}]` : `{${entries.length}}` }));
      const box = el("details", { className: "json-node", open: depth < 1 }, summary);
      const list = el("div", { className: "json-children" });
      for (const [childKey, child] of entries) list.append(jsonTree(child, depth + 1, childKey));
      box.append(list);
      return box;
    }
    const shown = typeof value === "string" ? JSON.stringify(value) : String(value);
    return el("div", { className: "json-leaf" }, label, el("span", { className: `json-${value === null ? "null" : typeof value}`, text: shown }));
  }

  function safeHref(uri) {
    try {
      const url = new URL(uri, window.location.href);
      return ["http:", "https:"].includes(url.protocol) ? url.href : null;
    } catch (e) { return null; }
  }

  function dataUrl(mime, data) {
    return `data:${mime};base64,${data}`;
  }

  function block(content) {
    switch (content.type) {
      case "text":
        return el("pre", { className: "block text" }, document.createTextNode(content.text));
      case "image":
        if (!/^image\/[A-Za-z0-9.+-]+$/.test(content.mimeType || "")) return el("p", { className: "block muted", text: `image of type ${content.mimeType} not shown` });
        return el("figure", { className: "block image" }, el("img", { src: dataUrl(content.mimeType, content.data), alt: "image result" }),
          el("figcaption", { className: "muted", text: content.mimeType }));
      case "audio":
        if (!/^audio\/[A-Za-z0-9.+-]+$/.test(content.mimeType || "")) return el("p", { className: "block muted", text: `audio of type ${content.mimeType} not shown` });
        return el("figure", { className: "block audio" }, el("audio", { controls: true, src: dataUrl(content.mimeType, content.data) }),
          el("figcaption", { className: "muted", text: content.mimeType }));
      case "resource_link": {
        const href = safeHref(content.uri);
        const name = content.title || content.name || content.uri;
        const link = href ? el("a", { href, rel: "noopener noreferrer", target: "_blank", text: name }) : el("code", { text: content.uri });
        return el("div", { className: "block resource-link" }, el("span", { className: "pill", text: "link" }), " ", link,
          content.description ? el("div", { className: "muted", text: content.description }) : null,
          el("div", { className: "muted", text: [content.uri, content.mimeType, content.size != null ? `${content.size} bytes` : null].filter(Boolean).join(" · ") }));
      }
      case "resource": {
        const resource = content.resource || {};
        const body = resource.text !== undefined
          ? el("pre", { className: "text" }, document.createTextNode(resource.text))
          : resource.blob !== undefined
            ? el("a", { href: dataUrl(resource.mimeType || "application/octet-stream", resource.blob), download: (resource.uri || "resource").split("/").pop(),
              text: `download (${Math.floor((resource.blob.length * 3) / 4)} bytes)` })
            : jsonTree(resource);
        return el("div", { className: "block resource" }, el("span", { className: "pill", text: "resource" }), " ",
          el("code", { text: resource.uri || "" }), resource.mimeType ? el("span", { className: "muted", text: ` ${resource.mimeType}` }) : null, body);
      }
      default:
        return el("div", { className: "block" }, jsonTree(content));
    }
  }

  function render(container, result, extra = {}) {
    container.replaceChildren();
    if (!result) return;
    const facts = [result.node ? `node ${result.node}` : null, result.duration_ms != null ? `${result.duration_ms.toFixed(1)} ms` : null,
      result.cached ? "cached" : null].filter(Boolean).join(" · ");
    const head = el("div", { className: "result-head" },
      el("span", { className: `pill ${result.is_error ? "bad" : "good"}`, text: result.is_error ? "error" : "ok" }),
      el("span", { className: "muted", text: ` ${facts}` }),
      extra.detailHref ? el("a", { href: extra.detailHref, className: "detail-link", text: "call detail" }) : null);
    container.append(head);
    if (result.error) {
      const error = result.error;
      const box = el("div", { className: "error-box", "data-code": error.code },
        el("div", {}, el("strong", { text: error.code }), document.createTextNode(`: ${error.message}`)),
        el("div", { className: "retry", text: error.retryable ? "Retryable: the same call may succeed later." : "Not retryable: change the call before trying again." }));
      if (error.suggestions && error.suggestions.length) box.append(el("div", { text: `Did you mean: ${error.suggestions.join(", ")}?` }));
      if (error.details) box.append(el("details", {}, el("summary", { text: "details" }), jsonTree(error.details)));
      container.append(box);
    }
    if (result.structured_content !== null && result.structured_content !== undefined) {
      container.append(el("h3", { text: "Structured content" }), el("div", { className: "json-view" }, jsonTree(result.structured_content)));
    }
    const blocks = (result.content || []).filter((content) => !(result.error && content.type === "text"));
    if (blocks.length) {
      container.append(el("h3", { text: "Content" }));
      for (const content of blocks) container.append(block(content));
    }
  }

  return { render, jsonTree };
})();
