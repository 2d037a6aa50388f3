// What a function changed in a message, for the page to show: the JSON
// Pointers of the members added, removed or changed, and the message after
// the call with those members' lines marked. Presentation only: the rules
// live in the package; this compares two plain JSON values.

/** A JSON Pointer segment for `key`. */
const segment = (key) => String(key).replaceAll("~", "~0").replaceAll("/", "~1");
const isObject = (value) => typeof value === "object" && value !== null;

/** Each difference between two JSON values: `{ path, kind: "added" | "removed" | "changed", before, after }`. */
export function differences(before, after, path = "") {
  if (Object.is(before, after)) return [];
  if (!isObject(before) || !isObject(after) || Array.isArray(before) !== Array.isArray(after)) {
    return [{ path, kind: "changed", before, after }];
  }
  const found = [];
  for (const key of Object.keys(before)) {
    if (!(key in after)) found.push({ path: `${path}/${segment(key)}`, kind: "removed", before: before[key] });
  }
  for (const key of Object.keys(after)) {
    const at = `${path}/${segment(key)}`;
    if (!(key in before)) found.push({ path: at, kind: "added", after: after[key] });
    else found.push(...differences(before[key], after[key], at));
  }
  return found;
}

/**
 * `value` as indented JSON, one element per line, each holding its text as
 * text (never markup); a line inside a member at one of `marked` (pointer →
 * kind) gets that kind as its class.
 */
export function lines(value, marked) {
  const out = [];
  const line = (indent, text, path) => {
    const node = document.createElement("span");
    node.textContent = `${"  ".repeat(indent)}${text}\n`;
    const pointer = [...marked.keys()].find((at) => path === at || path.startsWith(`${at}/`));
    if (pointer !== undefined) node.className = marked.get(pointer);
    out.push(node);
  };
  const walk = (item, indent, path, prefix, comma) => {
    if (!isObject(item) || Object.keys(item).length === 0) {
      line(indent, `${prefix}${JSON.stringify(item)}${comma}`, path);
      return;
    }
    const array = Array.isArray(item);
    line(indent, `${prefix}${array ? "[" : "{"}`, path);
    const keys = Object.keys(item);
    keys.forEach((key, index) => {
      const last = index === keys.length - 1 ? "" : ",";
      walk(item[key], indent + 1, `${path}/${segment(key)}`, array ? "" : `${JSON.stringify(key)}: `, last);
    });
    line(indent, `${array ? "]" : "}"}${comma}`, path);
  };
  walk(value, 0, "", "", "");
  return out;
}
