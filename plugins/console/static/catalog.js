// The catalog's filters apply as you type (the server filters; this only submits the form).
"use strict";

(() => {
  const form = document.getElementById("catalog-filters");
  let timer = null;
  form.querySelector('input[name="q"]').addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(() => form.requestSubmit(), 350);
  });
  form.querySelectorAll("select").forEach((select) => select.addEventListener("change", () => form.requestSubmit()));
  const search = form.querySelector('input[name="q"]');
  search.setSelectionRange(search.value.length, search.value.length);
})();
