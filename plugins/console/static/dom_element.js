// Builds DOM nodes from a tag, attributes and children; shared by the form and the result view.
"use strict";

const DomElement = (() => {
  // Text goes in as textContent, never as markup; false/null/undefined attributes are left out.
  function el(tag, attrs = {}, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs)) {
      if (value === undefined || value === null || value === false) continue;
      if (key === "text") node.textContent = value;
      else if (key === "className") node.className = value;
      else node.setAttribute(key, value === true ? "" : String(value));
    }
    for (const child of children) if (child) node.append(child);
    return node;
  }

  return { el };
})();
