/**
 * Compares what xterm.js (headless) makes of a terminal's raw output with what it makes of the daemon's
 * VT checkpoint of the same terminal: the active buffer, every line's text and wrap flag, every cell's width
 * and attributes, the cursor and the modes; then, when the alternate screen is active, the same again after
 * both leave it (`CSI ? 1049 l`). Reads cases as JSON lines from the file named first, writes one JSON summary
 * per class to stdout. A case counts as "agreeing" when Ghostty (the daemon's `read_rows` of every row, and
 * the soft wraps, cell backgrounds, foregrounds and flags and character columns of a Ghostty fed the same
 * bytes, and the cursor) and xterm.js show the same text, wraps, cell attributes, widths and cursor, history
 * included, for the raw bytes; emulator disagreements are excluded by that rule, not case by case.
 */
import { readFileSync } from "node:fs";
import xterm from "@xterm/headless";

const { Terminal } = xterm;

/**
 * Feeds `bytes` to a fresh terminal of the case's size, synchronously (the asynchronous write would turn an
 * exception of xterm.js's parser, which some adversarial input provokes, into an uncaught one), and returns
 * it; `null` when xterm.js itself fails on the input.
 */
function feed(cols, rows, bytes) {
  const term = new Terminal({ cols, rows, scrollback: 100000, allowProposedApi: true, logLevel: "off" });
  return write(term, bytes) ? term : null;
}

/** Writes `data` to `term` synchronously; false when xterm.js fails on it. */
function write(term, data) {
  try {
    term._core.writeSync(data);
    return true;
  } catch {
    return false;
  }
}

/** xterm.js's colour mode, with its two palette modes (SGR 30–37 and SGR 38;5) as one: the same colour. */
function mode(colorMode) {
  return colorMode === 16777216 ? 33554432 : colorMode;
}

/** Everything compared of a terminal, as one comparable object. */
function state(term) {
  const buffer = term.buffer.active;
  const lines = [];
  for (let y = 0; y < buffer.length; y++) {
    const line = buffer.getLine(y);
    const cells = [];
    for (let x = 0; x < term.cols; x++) {
      const c = line.getCell(x);
      if (!c) continue;
      cells.push([
        // A blank cell shows the same whether empty or a space (a VT stream cannot always tell them apart).
        c.getChars() || " ", c.getWidth(), mode(c.getFgColorMode()), c.getFgColor(), mode(c.getBgColorMode()), c.getBgColor(),
        // Flags as 0 or 1 (xterm.js answers a flag's bit, and another value for an underline set as `4:1`).
        ...[c.isBold(), c.isItalic(), c.isDim(), c.isUnderline(), c.isBlink(), c.isInverse(), c.isInvisible(),
          c.isStrikethrough(), c.isOverline()].map((f) => (f ? 1 : 0)),
      ].join(","));
    }
    // Trailing blanks cut, empty or spaces alike (as for cells above: a printed space in a pen shows that pen,
    // which an erase cannot carry, so a checkpoint may have to print what the raw output left empty).
    lines.push({ text: line.translateToString(true).trimEnd(), wrapped: line.isWrapped, cells: cells.join("|") });
  }
  const m = term.modes;
  return {
    type: buffer.type,
    length: buffer.length,
    cursor: [buffer.cursorX, buffer.cursorY],
    modes: [m.applicationCursorKeysMode, m.bracketedPasteMode, m.insertMode, m.mouseTrackingMode, m.originMode,
      m.wraparoundMode].join(","),
    lines,
  };
}

/** The first difference between two states, or null. */
function diff(a, b) {
  for (const key of ["type", "length", "modes"]) {
    if (a[key] !== b[key]) return `${key}: ${a[key]} != ${b[key]}`;
  }
  if (a.cursor.join() !== b.cursor.join()) return `cursor: ${a.cursor} != ${b.cursor}`;
  for (let y = 0; y < a.lines.length; y++) {
    const [la, lb] = [a.lines[y], b.lines[y]];
    if (la.text !== lb.text) return `line ${y} text: ${JSON.stringify(la.text)} != ${JSON.stringify(lb.text)}`;
    if (la.wrapped !== lb.wrapped) return `line ${y} wrapped: ${la.wrapped} != ${lb.wrapped}`;
    if (la.cells !== lb.cells) {
      const [ca, cb] = [la.cells.split("|"), lb.cells.split("|")];
      const x = ca.findIndex((cell, i) => cell !== cb[i]);
      return `line ${y} cell ${x}: ${JSON.stringify(ca[x])} != ${JSON.stringify(cb[x])}`;
    }
  }
  return null;
}

/** `perLine(line)` of every line of the active buffer, history included. */
function lines(term, perLine) {
  const buffer = term.buffer.active;
  const out = [];
  for (let y = 0; y < buffer.length; y++) out.push(perLine(buffer.getLine(y)));
  return out;
}

/** `perCell(cell)` of every cell of `line`, joined with `separator`. */
function cells(term, line, perCell, separator) {
  const out = [];
  for (let x = 0; x < term.cols; x++) out.push(perCell(line.getCell(x)));
  return out.join(separator);
}

/** What the Rust side reads of Ghostty, read of xterm.js: every line's text (trailing blanks and blank last
 * lines cut), which lines continue a soft wrap, every cell's background (`d`, `p<index>`, `r<rgb>`), and
 * where every character sits (a cell's text, or nothing). */
function view(term) {
  const bg = (c) => {
    const m = c.getBgColorMode();
    return m === 0 ? "d" : m === 50331648 ? `r${c.getBgColor()}` : `p${c.getBgColor()}`;
  };
  return {
    lines: normalise(lines(term, (line) => line.translateToString(true))),
    wraps: lines(term, (line) => line.isWrapped),
    bgs: lines(term, (line) => cells(term, line, bg, ",")),
    layout: lines(term, (line) => cells(term, line, (c) => c.getChars().replace(/ +$/, ""), "\u0001")),
    styles: lines(term, (line) => cells(term, line, style, ",")),
  };
}

/** What a cell shows besides its text and background, as the Rust side writes it of Ghostty (`screen_view`):
 * the foreground (`d`, `p<index>`, `r<rgb>`) and the flags bold, italic, faint, underline, blink, inverse,
 * invisible, strikethrough and overline as `1`/`0`; `-` for the second cell of a wide character. */
function style(c) {
  if (c.getWidth() === 0) return "-";
  const m = c.getFgColorMode();
  const fg = m === 0 ? "d" : m === 50331648 ? `r${c.getFgColor()}` : `p${c.getFgColor()}`;
  const flags = [c.isBold(), c.isItalic(), c.isDim(), c.isUnderline(), c.isBlink(), c.isInverse(), c.isInvisible(),
    c.isStrikethrough(), c.isOverline()].map((f) => (f ? "1" : "0")).join("");
  return `${fg}${flags}`;
}

/** Whether two per-row lists agree on every row both have. */
function sameRows(ghostty, xtermRows) {
  const n = Math.min(ghostty.length, xtermRows.length);
  for (let y = 0; y < n; y++) if (ghostty[y] !== xtermRows[y]) return false;
  return true;
}

/** Whether Ghostty's view (`screen_view` on the Rust side, with `lines` normalised here) and xterm.js's
 * agree: same text, same wraps, and the same backgrounds and character columns on every row both have. */
function agrees(ghostty, lineTexts, term) {
  const x = view(term);
  return JSON.stringify(normalise(lineTexts)) === JSON.stringify(x.lines)
    && JSON.stringify(ghostty.wraps) === JSON.stringify(x.wraps)
    && sameRows(ghostty.bgs, x.bgs) && sameRows(ghostty.layout, x.layout) && sameRows(ghostty.styles, x.styles);
}

/** Lines with trailing blanks cut and blank lines at the end dropped. */
function normalise(lines) {
  const out = lines.map((l) => l.replace(/\s+$/, ""));
  while (out.length && out[out.length - 1] === "") out.pop();
  return out;
}

const verbose = process.argv.includes("-v");
const summary = new Map();
for (const line of readFileSync(process.argv[2], "utf8").split("\n")) {
  if (!line.trim()) continue;
  const c = JSON.parse(line);
  const raw = feed(c.cols, c.rows, Buffer.from(c.raw, "base64"));
  const replay = feed(c.cols, c.rows, Buffer.from(c.checkpoint, "base64"));
  const s = summary.get(c.class) ?? { class: c.class, cases: 0, matched: 0, agreeing: 0, agreeing_matched: 0, xterm_failed: 0 };
  summary.set(c.class, s);
  s.cases += 1;
  if (!raw || !replay) {
    // xterm.js's own parser failed: the emulators cannot be compared on this case.
    s.xterm_failed += 1;
    continue;
  }
  // Whether the emulators agree is decided on the raw bytes, before anything else is written.
  // The cursor, and whether a wrap is pending (xterm.js: the cursor one column past the last).
  const agree = agrees(c.ghostty, c.ghostty_lines, raw)
    && JSON.stringify(c.ghostty_cursor) === JSON.stringify([raw.buffer.active.cursorX, raw.buffer.active.cursorY])
    && c.ghostty.pending_wrap === (raw.buffer.active.cursorX >= c.cols);
  let agreeing = agree;
  let problem = diff(state(raw), state(replay));
  if (raw.buffer.active.type === "alternate") {
    write(raw, "\x1b[?1049l");
    write(replay, "\x1b[?1049l");
    // They must also agree on the primary screen they return to.
    agreeing = agreeing && c.ghostty.left != null && agrees(c.ghostty.left, c.ghostty.left.lines, raw);
    const after = problem ? null : diff(state(raw), state(replay));
    if (after) problem = `after leaving the alternate screen: ${after}`;
  }
  s.matched += problem ? 0 : 1;
  s.agreeing += agreeing ? 1 : 0;
  s.agreeing_matched += agreeing && !problem ? 1 : 0;
  if (verbose && problem) console.error(`${c.class} seed ${c.seed}${agreeing ? "" : " (emulators disagree)"}: ${problem}`);
}
for (const s of summary.values()) console.log(JSON.stringify(s));
