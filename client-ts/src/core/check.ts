//! Runtime checks of what the daemon sends, interpreted straight from the generated schema constant
//! (`generated/schema.ts`, bundled from `schema/`), so the checks and the types share one source. Only the
//! draft-07 keywords the bundle uses are understood; a schema using any other keyword fails loudly.

import { SCHEMA_DEFINITIONS } from "../generated/schema.js";
import { ProtocolError } from "./errors.js";

/** The keywords {@link checkValue} understands; `knownKeywordsOnly` in the tests walks the schema against it. */
export const KNOWN_KEYWORDS: ReadonlySet<string> = new Set([
  "$ref",
  "type",
  "const",
  "enum",
  "minimum",
  "maximum",
  "maxLength",
  "maxItems",
  "pattern",
  "items",
  "properties",
  "required",
  "additionalProperties",
  "oneOf",
  "allOf",
  "if",
  "then",
  "else",
  "not",
]);

/** The problem found first, with the path to it (`process.pty.cols`), or null when the value fits. */
export type Problem = string | null;

type Node = { readonly [keyword: string]: unknown };

const patterns = new Map<string, RegExp>();

function isNode(value: unknown): value is Node {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function definition(name: string): Node {
  const found = SCHEMA_DEFINITIONS[name];
  if (!isNode(found)) {
    throw new Error(`the generated schema has no definition ${name}`);
  }
  return found;
}

function typeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

function fitsType(value: unknown, type: string): boolean {
  const actual = typeOf(value);
  return actual === type || (type === "number" && actual === "integer");
}

function at(path: string, member: string | number): string {
  return typeof member === "number" ? `${path}[${member}]` : path ? `${path}.${member}` : member;
}

/** Checks `value` against one schema node; returns the first problem or null. */
function check(value: unknown, node: Node, path: string): Problem {
  for (const keyword of Object.keys(node)) {
    if (!KNOWN_KEYWORDS.has(keyword)) {
      throw new Error(`the generated schema uses ${keyword}, which the client's checker does not know`);
    }
  }
  const where = path || "the message";
  const ref = node["$ref"];
  if (typeof ref === "string") {
    const problem = check(value, definition(ref.replace("#/definitions/", "")), path);
    if (problem) return problem;
  }
  const type = node["type"];
  if (type !== undefined) {
    const types = Array.isArray(type) ? (type as string[]) : [type as string];
    if (!types.some((t) => fitsType(value, t))) {
      return `${where} should be ${types.join(" or ")}, found ${typeOf(value)}`;
    }
  }
  if ("const" in node && value !== node["const"]) {
    return `${where} should be ${JSON.stringify(node["const"])}, found ${JSON.stringify(value)}`;
  }
  const options = node["enum"];
  if (Array.isArray(options) && !options.includes(value)) {
    return `${where} should be one of ${options.map((o) => JSON.stringify(o)).join(", ")}, found ${JSON.stringify(value)}`;
  }
  if (typeof value === "number") {
    const minimum = node["minimum"];
    const maximum = node["maximum"];
    if (typeof minimum === "number" && value < minimum) return `${where} is ${value}, below ${minimum}`;
    if (typeof maximum === "number" && value > maximum) return `${where} is ${value}, above ${maximum}`;
  }
  const maxLength = node["maxLength"];
  // JSON Schema counts characters as Unicode code points, which is what iterating a string yields.
  if (typeof maxLength === "number" && typeof value === "string" && value.length > maxLength) {
    const length = [...value].length;
    if (length > maxLength) return `${where} is ${length} characters long, over ${maxLength}`;
  }
  const maxItems = node["maxItems"];
  if (typeof maxItems === "number" && Array.isArray(value) && value.length > maxItems) {
    return `${where} has ${value.length} items, over ${maxItems}`;
  }
  const pattern = node["pattern"];
  if (typeof pattern === "string" && typeof value === "string") {
    let regex = patterns.get(pattern);
    if (!regex) {
      regex = new RegExp(pattern, "u");
      patterns.set(pattern, regex);
    }
    if (!regex.test(value)) return `${where} does not match ${pattern}`;
  }
  if (Array.isArray(value) && isNode(node["items"])) {
    for (let i = 0; i < value.length; i++) {
      const problem = check(value[i], node["items"], at(path, i));
      if (problem) return problem;
    }
  }
  if (isNode(value)) {
    const problem = checkObject(value, node, path);
    if (problem) return problem;
  }
  const oneOf = node["oneOf"];
  if (Array.isArray(oneOf)) {
    const problem = checkOneOf(value, oneOf as Node[], path);
    if (problem) return problem;
  }
  const allOf = node["allOf"];
  if (Array.isArray(allOf)) {
    for (const part of allOf as Node[]) {
      const problem = check(value, part, path);
      if (problem) return problem;
    }
  }
  if (isNode(node["if"])) {
    const branch = check(value, node["if"], path) === null ? node["then"] : node["else"];
    if (isNode(branch)) {
      const problem = check(value, branch, path);
      if (problem) return problem;
    }
  }
  if (isNode(node["not"]) && check(value, node["not"], path) === null) {
    return `${where} must not fit ${JSON.stringify(node["not"])}`;
  }
  return null;
}

function checkObject(value: { readonly [member: string]: unknown }, node: Node, path: string): Problem {
  const required = node["required"];
  if (Array.isArray(required)) {
    for (const member of required as string[]) {
      if (!Object.prototype.hasOwnProperty.call(value, member)) {
        return `${at(path, member)} is missing`;
      }
    }
  }
  const properties = isNode(node["properties"]) ? node["properties"] : {};
  for (const [member, schema] of Object.entries(properties)) {
    if (Object.prototype.hasOwnProperty.call(value, member) && isNode(schema)) {
      const problem = check(value[member], schema, at(path, member));
      if (problem) return problem;
    }
  }
  const extra = node["additionalProperties"];
  if (isNode(extra)) {
    for (const [member, item] of Object.entries(value)) {
      if (!Object.prototype.hasOwnProperty.call(properties, member)) {
        const problem = check(item, extra, at(path, member));
        if (problem) return problem;
      }
    }
  }
  return null;
}

/** The member every variant pins with a string `const` (the tag of a tagged union), if there is one. */
function unionTag(variants: readonly Node[]): string | null {
  const first = variants[0];
  if (!first || !isNode(first["properties"])) return null;
  for (const candidate of Object.keys(first["properties"])) {
    const pinned = variants.every((variant) => {
      const properties = variant["properties"];
      return isNode(properties) && isNode(properties[candidate]) && typeof properties[candidate]["const"] === "string";
    });
    if (pinned) return candidate;
  }
  return null;
}

function checkOneOf(value: unknown, variants: readonly Node[], path: string): Problem {
  const where = path || "the message";
  const tag = isNode(value) ? unionTag(variants) : null;
  if (tag !== null && isNode(value)) {
    // A tagged union: the tag picks the variant, so the problem reported is that variant's.
    const chosen = variants.find((variant) => {
      const properties = variant["properties"] as { [member: string]: Node };
      return properties[tag]?.["const"] === value[tag];
    });
    if (!chosen) {
      return `${at(path, tag)} is ${JSON.stringify(value[tag])}, which is none of the known ${tag} values`;
    }
    return check(value, chosen, path);
  }
  const fitting = variants.filter((variant) => check(value, variant, path) === null).length;
  return fitting === 1 ? null : `${where} fits ${fitting} of the alternatives instead of exactly one`;
}

/** The first problem of `value` as an instance of the schema's definition `root` (`Response`, `Registration`,
 * ...), or null when it fits. */
export function problemWith(root: string, value: unknown): Problem {
  return check(value, definition(root), "");
}

/** Returns `value` typed as `T` when it fits the definition `root`; throws `ProtocolError` otherwise. */
export function checked<T>(root: string, value: unknown, what: string): T {
  const problem = problemWith(root, value);
  if (problem !== null) {
    throw new ProtocolError(`${what} does not fit the schema: ${problem}`);
  }
  return value as T;
}
