// A form generated from a JSON Schema: fields, defaults, client-side checks, and errors shown next to fields.
// Paths follow toolmesh's issue paths: $.key, $.list[2].name.
"use strict";

const SchemaForm = (() => {
  const INVALID_JSON = Symbol("invalid JSON");

  const el = DomElement.el;

  function mainType(schema) {
    let type = schema.type;
    if (Array.isArray(type)) type = type.find((t) => t !== "null") || type[0];
    if (!type) {
      if (schema.properties) return "object";
      if (schema.items) return "array";
      if (schema.enum && schema.enum.every((v) => typeof v === "string")) return "string";
    }
    return type || "any";
  }

  function childPath(path, key) {
    return typeof key === "number" ? `${path}[${key}]` : /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? `${path}.${key}` : `${path}['${key}']`;
  }

  // ---------------------------------------------------------------- references and nullable unions

  let rootSchema = {};

  function lookup(ref) {
    if (typeof ref !== "string" || !ref.startsWith("#")) return null;
    let node = rootSchema;
    for (const part of ref.slice(1).split("/").filter(Boolean)) {
      node = node && node[part.replace(/~1/g, "/").replace(/~0/g, "~")];
    }
    return node && typeof node === "object" ? node : null;
  }

  // A schema with its $ref followed and a nullable union (anyOf/oneOf with one non-null branch) unwrapped.
  function normalize(schema, seen = 0) {
    if (!schema || typeof schema !== "object" || seen > 20) return schema || {};
    const { $ref, ...rest } = schema;
    if ($ref) {
      const target = lookup($ref);
      if (target) return normalize({ ...target, ...rest }, seen + 1);
    }
    const union = schema.anyOf || schema.oneOf;
    if (Array.isArray(union)) {
      const branches = union.map((branch) => normalize(branch, seen + 1)).filter((branch) => branch.type !== "null");
      if (branches.length === 1) {
        const { anyOf, oneOf, ...outer } = schema;
        const merged = { ...branches[0], ...outer, nullable: true };
        if (merged.default === null) delete merged.default;
        return merged;
      }
    }
    return schema;
  }

  // ---------------------------------------------------------------- fields

  function fieldFor(raw, options) {
    let schema = normalize(raw);
    if (!schema.enum && Array.isArray(options.choices) && options.choices.length) schema = { ...schema, enum: options.choices };
    if (schema.enum) return enumField(schema, options);
    switch (mainType(schema)) {
      case "object": return schema.properties ? objectField(schema, options) : jsonField(schema, options);
      case "array": return schema.items && !Array.isArray(schema.items) ? arrayField(schema, options) : jsonField(schema, options);
      case "string": return stringField(schema, options);
      case "integer": case "number": return numberField(schema, options);
      case "boolean": return booleanField(schema, options);
      default: return jsonField(schema, options);
    }
  }

  function labelled(schema, options, control) {
    const id = `f${Math.random().toString(36).slice(2, 10)}`;
    control.id = id;
    const title = options.label || schema.title || options.name || "value";
    const label = el("label", { for: id }, el("span", { text: title }));
    if (options.required) label.append(el("span", { className: "required", title: "required", text: " *" }));
    const help = options.help || schema.description;
    const error = el("div", { className: "field-error", role: "alert" });
    const hints = [];
    if (schema.minimum !== undefined) hints.push(`≥ ${schema.minimum}`);
    if (schema.exclusiveMinimum !== undefined) hints.push(`> ${schema.exclusiveMinimum}`);
    if (schema.maximum !== undefined) hints.push(`≤ ${schema.maximum}`);
    if (schema.exclusiveMaximum !== undefined) hints.push(`< ${schema.exclusiveMaximum}`);
    if (schema.minLength !== undefined) hints.push(`at least ${schema.minLength} characters`);
    if (schema.maxLength !== undefined) hints.push(`at most ${schema.maxLength} characters`);
    if (schema.pattern) hints.push(`matches ${schema.pattern}`);
    if (schema.format) hints.push(schema.format);
    const type = mainType(schema);
    const wrap = el("div", { className: `field type-${type}`, "data-path": options.path },
      label, control,
      help ? el("div", { className: "help", text: help }) : null,
      hints.length ? el("div", { className: "hint", text: `${type}: ${hints.join(", ")}` }) : null,
      error);
    return { wrap, error, control };
  }

  function scalarNode(schema, options, control, read, write) {
    const { wrap, error } = labelled(schema, options, control);
    const node = {
      schema, element: wrap, error, control, required: options.required,
      get: read, set: write,
      nodeAt(path, here) { return path === here ? node : null; },
    };
    if (schema.default !== undefined) write(schema.default);
    else if (options.fallback !== undefined) write(options.fallback);
    return node;
  }

  function stringField(schema, options) {
    const widget = options.widget;
    let control;
    if (widget === "textarea" || (schema.maxLength || 0) > 200 || schema.format === "textarea") {
      control = el("textarea", { rows: 4 });
    } else {
      const secret = widget === "password" || widget === "secret" || schema.format === "password" || schema.writeOnly;
      const type = secret ? "password" : schema.format === "email" ? "email" : schema.format === "uri" ? "url" : "text";
      control = el("input", { type });
    }
    if (schema.maxLength !== undefined) control.setAttribute("maxlength", schema.maxLength);
    if (options.required) control.setAttribute("aria-required", "true");
    if (options.placeholder) control.setAttribute("placeholder", String(options.placeholder));
    else if (schema.examples && schema.examples.length) control.setAttribute("placeholder", String(schema.examples[0]));
    return scalarNode(schema, options, control,
      () => (control.value === "" ? undefined : control.value),
      (value) => { control.value = value == null ? "" : String(value); });
  }

  function numberField(schema, options) {
    const control = el("input", { type: "number", inputmode: "decimal" });
    const integer = mainType(schema) === "integer";
    control.step = schema.multipleOf !== undefined ? String(schema.multipleOf) : integer ? "1" : "any";
    if (schema.minimum !== undefined) control.min = schema.minimum;
    if (schema.maximum !== undefined) control.max = schema.maximum;
    return scalarNode(schema, options, control,
      () => {
        if (control.value === "") return control.validity.badInput ? control.value || "not a number" : undefined;
        const value = Number(control.value);
        return Number.isNaN(value) ? control.value : value;
      },
      (value) => { control.value = value == null ? "" : String(value); });
  }

  function booleanField(schema, options) {
    const control = el("input", { type: "checkbox" });
    return scalarNode(schema, options, control, () => control.checked, (value) => { control.checked = Boolean(value); });
  }

  function enumField(schema, options) {
    const control = el("select");
    if (!options.required || schema.default === undefined) control.append(el("option", { value: "", text: "—" }));
    for (const choice of schema.enum) {
      control.append(el("option", { value: JSON.stringify(choice), text: typeof choice === "string" ? choice : JSON.stringify(choice) }));
    }
    return scalarNode(schema, options, control,
      () => (control.value === "" ? undefined : JSON.parse(control.value)),
      (value) => { control.value = value === undefined ? "" : JSON.stringify(value); });
  }

  function jsonField(schema, options) {
    const control = el("textarea", { rows: 3, className: "json-input", placeholder: "JSON value" });
    return scalarNode(schema, options, control,
      () => {
        if (control.value.trim() === "") return undefined;
        try { return JSON.parse(control.value); } catch (e) { return { [INVALID_JSON]: e.message }; }
      },
      (value) => { control.value = value === undefined ? "" : JSON.stringify(value, null, 2); });
  }

  function objectField(schema, options) {
    const ui = options.ui || {};
    const fieldset = el("fieldset", { className: "object", "data-path": options.path });
    if (options.path !== "$") {
      const legend = el("legend", { text: options.label || schema.title || options.name || "object" });
      if (options.required) legend.append(el("span", { className: "required", text: " *" }));
      fieldset.append(legend);
      if (schema.description) fieldset.append(el("div", { className: "help", text: schema.description }));
    }
    const error = el("div", { className: "field-error", role: "alert" });
    fieldset.append(error);
    const required = new Set(schema.required || []);
    const configured = new Map((ui.config_fields || []).map((field) => [field.name, field]));
    for (const field of configured.values()) if (field.required) required.add(field.name);
    const order = [...(ui.order || []), ...configured.keys(), ...Object.keys(schema.properties)];
    const keys = [...new Set(order)].filter((key) => key in schema.properties);
    const children = [];
    for (const key of keys) {
      const config = configured.get(key) || {};
      const child = fieldFor(schema.properties[key], {
        name: key, path: childPath(options.path, key), required: required.has(key),
        label: config.label, help: (ui.help || {})[key] || config.description,
        widget: (ui.widgets || {})[key] || config.widget || config.type, fallback: config.default,
        placeholder: config.placeholder, choices: config.options,
      });
      children.push({ key, node: child });
      fieldset.append(child.element);
    }
    const node = {
      schema, element: fieldset, error, required: options.required, children, requiredKeys: required,
      get() {
        const value = {};
        for (const { key, node: child } of children) {
          const item = child.get();
          if (item !== undefined) value[key] = item;
        }
        return Object.keys(value).length || options.required || options.path === "$" ? value : undefined;
      },
      set(value) {
        for (const { key, node: child } of children) child.set(value && typeof value === "object" ? value[key] : undefined);
      },
      nodeAt(path, here) {
        if (path === here) return node;
        for (const { key, node: child } of children) {
          const found = child.nodeAt(path, childPath(here, key));
          if (found) return found;
        }
        return null;
      },
    };
    return node;
  }

  function arrayField(schema, options) {
    const box = el("fieldset", { className: "array", "data-path": options.path });
    const legend = el("legend", { text: options.label || schema.title || options.name || "list" });
    if (options.required) legend.append(el("span", { className: "required", text: " *" }));
    box.append(legend);
    if (options.help || schema.description) box.append(el("div", { className: "help", text: options.help || schema.description }));
    const list = el("ol", { className: "items" });
    const error = el("div", { className: "field-error", role: "alert" });
    const add = el("button", { type: "button", className: "secondary add-item", text: "+ add item" });
    box.append(list, add, error);
    const items = [];
    function addItem(value) {
      const child = fieldFor(schema.items, { name: `item ${items.length + 1}`, path: `${options.path}[]`, required: true });
      const remove = el("button", { type: "button", className: "secondary remove-item", text: "remove", "aria-label": "remove item" });
      const row = el("li", {}, child.element, remove);
      const entry = { node: child, row };
      remove.addEventListener("click", () => { items.splice(items.indexOf(entry), 1); row.remove(); });
      items.push(entry);
      list.append(row);
      if (value !== undefined) child.set(value);
    }
    add.addEventListener("click", () => addItem(undefined));
    const node = {
      schema, element: box, error, required: options.required,
      get() {
        if (!items.length && !options.required) return undefined;
        return items.map(({ node: child }) => child.get());
      },
      set(value) {
        items.splice(0).forEach(({ row }) => row.remove());
        if (Array.isArray(value)) value.forEach((item) => addItem(item));
      },
      nodeAt(path, here) {
        if (path === here) return node;
        for (let index = 0; index < items.length; index += 1) {
          const found = items[index].node.nodeAt(path, childPath(here, index));
          if (found) return found;
        }
        return null;
      },
    };
    if (schema.default !== undefined) node.set(schema.default);
    return node;
  }

  // ---------------------------------------------------------------- checks

  function typeOf(value) {
    if (value === null) return "null";
    if (Array.isArray(value)) return "array";
    if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
    return typeof value;
  }

  function fitsType(type, value) {
    const actual = typeOf(value);
    if (type === "number") return actual === "number" || actual === "integer";
    return actual === type;
  }

  function check(raw, value, path, issues) {
    if (value === undefined || !raw || typeof raw !== "object") return;
    const schema = normalize(raw);
    if (value === null && schema.nullable) return;
    const union = schema.anyOf || schema.oneOf;
    if (Array.isArray(union)) {
      const fits = union.some((branch) => { const found = []; check(branch, value, path, found); return !found.length; });
      if (!fits) issues.push({ path, message: "matches none of the allowed forms" });
      return;
    }
    if (value && typeof value === "object" && INVALID_JSON in value) {
      issues.push({ path, message: `not valid JSON: ${value[INVALID_JSON]}` });
      return;
    }
    const types = schema.type === undefined ? [] : Array.isArray(schema.type) ? schema.type : [schema.type];
    if (types.length && !types.some((type) => fitsType(type, value))) {
      const shown = typeof value === "string" ? `"${value}"` : JSON.stringify(value);
      issues.push({ path, message: `${shown} is not of type ${types.map((t) => `"${t}"`).join(", ")}` });
      return;
    }
    if (schema.enum && !schema.enum.some((choice) => JSON.stringify(choice) === JSON.stringify(value))) {
      issues.push({ path, message: `must be one of ${schema.enum.map((c) => JSON.stringify(c)).join(", ")}` });
    }
    if (schema.const !== undefined && JSON.stringify(schema.const) !== JSON.stringify(value)) {
      issues.push({ path, message: `must be ${JSON.stringify(schema.const)}` });
    }
    if (typeof value === "string") {
      const length = [...value].length;
      if (schema.minLength !== undefined && length < schema.minLength) issues.push({ path, message: `must be at least ${schema.minLength} characters long` });
      if (schema.maxLength !== undefined && length > schema.maxLength) issues.push({ path, message: `must be at most ${schema.maxLength} characters long` });
      if (schema.pattern) {
        try { if (!new RegExp(schema.pattern, "u").test(value)) issues.push({ path, message: `does not match ${schema.pattern}` }); } catch (e) { /* the node checks patterns JS cannot read */ }
      }
    }
    if (typeof value === "number") {
      if (schema.minimum !== undefined && value < schema.minimum) issues.push({ path, message: `must be ≥ ${schema.minimum}` });
      if (schema.maximum !== undefined && value > schema.maximum) issues.push({ path, message: `must be ≤ ${schema.maximum}` });
      if (typeof schema.exclusiveMinimum === "number" && value <= schema.exclusiveMinimum) issues.push({ path, message: `must be > ${schema.exclusiveMinimum}` });
      if (typeof schema.exclusiveMaximum === "number" && value >= schema.exclusiveMaximum) issues.push({ path, message: `must be < ${schema.exclusiveMaximum}` });
      if (schema.multipleOf && Math.abs(value / schema.multipleOf - Math.round(value / schema.multipleOf)) > 1e-9) issues.push({ path, message: `must be a multiple of ${schema.multipleOf}` });
    }
    if (Array.isArray(value)) {
      if (schema.minItems !== undefined && value.length < schema.minItems) issues.push({ path, message: `needs at least ${schema.minItems} items` });
      if (schema.maxItems !== undefined && value.length > schema.maxItems) issues.push({ path, message: `takes at most ${schema.maxItems} items` });
      if (schema.uniqueItems && new Set(value.map((v) => JSON.stringify(v))).size !== value.length) issues.push({ path, message: "items must be unique" });
      if (schema.items && !Array.isArray(schema.items)) value.forEach((item, index) => check(schema.items, item, childPath(path, index), issues));
    }
    if (typeOf(value) === "object") {
      for (const key of schema.required || []) {
        if (!(key in value)) issues.push({ path: childPath(path, key), message: "is required" });
      }
      for (const [key, item] of Object.entries(value)) {
        if (schema.properties && key in schema.properties) check(schema.properties[key], item, childPath(path, key), issues);
        else if (schema.additionalProperties === false) issues.push({ path: childPath(path, key), message: "is not an allowed property" });
      }
    }
  }

  // ---------------------------------------------------------------- the form

  function build(container, schema, ui) {
    rootSchema = schema && typeof schema === "object" ? schema : {};
    const root = fieldFor(schema && typeof schema === "object" ? schema : {}, { path: "$", ui: ui || {}, required: true });
    container.replaceChildren(root.element);
    const general = el("div", { className: "field-error form-error", role: "alert" });
    container.prepend(general);

    function clear() {
      container.querySelectorAll(".field-error").forEach((node) => { node.textContent = ""; });
      container.querySelectorAll(".invalid").forEach((node) => node.classList.remove("invalid"));
    }

    // Where an issue belongs: its own field, else the field a "required property" message names, else the form.
    function place(issue) {
      let path = issue.path || "$";
      let node = root.nodeAt(path, "$");
      const named = /["']([^"']+)["'] is a required property/.exec(issue.message || "");
      if (named && node && node.children) {
        const child = root.nodeAt(childPath(path, named[1]), "$");
        if (child) { node = child; path = childPath(path, named[1]); }
      }
      while (!node && path.length > 1) {
        path = path.replace(/(\.[^.[\]]+|\[[^\]]*\])$/, "") || "$";
        node = root.nodeAt(path, "$");
      }
      return node && node !== root ? node : null;
    }

    function show(issues) {
      clear();
      for (const issue of issues) {
        const node = place(issue);
        const target = node ? node.error : general;
        target.textContent = target.textContent ? `${target.textContent}; ${issue.message}` : issue.message;
        if (node) node.element.classList.add("invalid");
      }
      const first = container.querySelector(".invalid input, .invalid select, .invalid textarea");
      if (first) first.focus();
    }

    function validate() {
      const value = root.get();
      const issues = [];
      check(schema, value, "$", issues);
      return { value, issues };
    }

    return { root, value: () => root.get(), set: (value) => root.set(value), validate, show, clear };
  }

  return { build, check };
})();
