// The call detail page: the console's own call's result, rendered like on the tool page.
"use strict";

(() => {
  const node = document.getElementById("call-data");
  if (!node) return;
  const call = JSON.parse(node.textContent);
  if (call && call.result) ResultView.render(document.getElementById("result"), call.result);
})();
