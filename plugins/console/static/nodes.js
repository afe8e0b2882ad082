// The nodes page: the table is re-rendered by the server every second (nodes join, leave, get busy).
"use strict";

(() => {
  const body = document.querySelector("#nodes tbody");
  async function refresh() {
    try {
      const answer = await fetch("/nodes/table", { credentials: "same-origin" });
      if (answer.ok) body.innerHTML = await answer.text();  // server-rendered and escaped by the template
    } catch (e) { /* the console restarts or the network blinks: try again next second */ }
    setTimeout(refresh, 1000);
  }
  setTimeout(refresh, 1000);
})();
