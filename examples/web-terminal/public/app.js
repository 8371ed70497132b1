/** The web terminal's page: shows a daemon terminal with ghostty-web (or xterm.js), sends keys, size, takeover. */

const params = new URLSearchParams(location.search);
const renderer = params.get("renderer") === "xterm" ? "xterm" : "ghostty";
const observe = params.get("observe") === "1";
/** History the page's terminal keeps (the daemon keeps its own; a reload brings it back): xterm.js counts
 * lines; ghostty-web passes the number to Ghostty's scrollback limit, which counts bytes of its pages, about
 * 1.3 KB per row of 80 columns, so 32 MB is about 25,000 rows (ghostty-web's default, 10,000, kept fewer than
 * 1,200 of a 10,000-line history). */
const SCROLLBACK = { xterm: 20000, ghostty: 32_000_000 };
/** How long the page waits before attaching again after its connection closed. */
const RECONNECT_MS = 1000;

const roleLabel = document.getElementById("role");
const takeoverButton = document.getElementById("takeover");
const status = document.getElementById("status");
const select = document.getElementById("renderer");
select.value = renderer;
select.addEventListener("change", () => {
  params.set("renderer", select.value);
  location.search = params.toString();
});

/** The attachment id of this tab: kept across reloads (sessionStorage is per tab), new for a new tab. */
function tabId() {
  let id = sessionStorage.getItem("opencode-pty-tab");
  if (!id) {
    id = Array.from(crypto.getRandomValues(new Uint8Array(8)), (b) => b.toString(16).padStart(2, "0")).join("");
    id = `tab-${id}`;
    sessionStorage.setItem("opencode-pty-tab", id);
  }
  return id;
}

async function makeTerminal() {
  const options = { scrollback: SCROLLBACK[renderer], fontSize: 14, fontFamily: "DejaVu Sans Mono, monospace", cursorBlink: false };
  if (renderer === "xterm") {
    const css = document.createElement("link");
    css.rel = "stylesheet";
    css.href = "/vendor/xterm/css/xterm.css";
    document.head.append(css);
    const { Terminal } = await import("/vendor/xterm/lib/xterm.mjs");
    const { FitAddon } = await import("/vendor/addon-fit/addon-fit.mjs");
    const term = new Terminal(options);
    const fit = new FitAddon();
    term.loadAddon(fit);
    return { term, fit };
  }
  const { init, Terminal, FitAddon } = await import("/vendor/ghostty-web/ghostty-web.js");
  await init();
  const term = new Terminal(options);
  const fit = new FitAddon();
  term.loadAddon(fit);
  return { term, fit };
}

const { term, fit } = await makeTerminal();
term.open(document.getElementById("terminal"));

/** What the page knows, for people (the toolbar) and for the tests (`window.webTerminal`). */
const state = {
  renderer,
  tab: tabId(),
  role: "connecting",
  controller: null,
  /** How many times the screen was restored from a checkpoint (each attach and each resize). */
  restores: 0,
  /** Whether the terminal shows the attach's checkpoint and replay (false until then). */
  restored: false,
  exitCode: undefined,
  errors: [],
  /** Output bytes written since the last restore. */
  bytes: 0,
};

/** Terminal operations in the order the socket delivered them: a reset waits for the writes before it. */
let chain = Promise.resolve();
function then(step) {
  chain = chain.then(step).catch((error) => report(String(error?.stack ?? error)));
  return chain;
}
/** Resolves once every write so far has been parsed by the terminal. ghostty-web parses in `write` itself (and
 * calls a write's callback only at the next animation frame, which a hidden tab never gets); xterm.js parses
 * later and calls the callback then. */
function fence() {
  return then(() => (renderer === "ghostty" ? undefined : new Promise((resolve) => term.write("", resolve))));
}

/** Set while the page resizes its terminal to the daemon's size, so that resize is not sent back. */
let applying = false;
let socket = null;

function report(message) {
  state.errors.push(message);
  status.textContent = message;
}

function showRole() {
  roleLabel.textContent = state.exitCode !== undefined ? `exited (${state.exitCode})` : state.role;
  takeoverButton.hidden = state.role !== "observer" || state.exitCode !== undefined;
}

function send(message) {
  if (socket?.readyState === WebSocket.OPEN) {
    socket.send(JSON.stringify(message));
  }
}

/** The size the window offers, or the terminal's own when it cannot be measured. */
function offered() {
  const size = fit.proposeDimensions();
  return size && size.cols > 0 && size.rows > 0 ? { cols: size.cols, rows: size.rows } : { cols: term.cols, rows: term.rows };
}

/** As the controller: gives the terminal the window's size, and the daemon with it (through `onResize`). */
function fitToWindow() {
  if (state.role === "controller") {
    fit.fit();
  }
}

term.onResize(({ cols, rows }) => {
  if (!applying && state.role === "controller") {
    send({ type: "resize", cols, rows });
  }
});
term.onData((data) => {
  if (state.role === "controller") {
    send({ type: "input", data });
  }
});
takeoverButton.addEventListener("click", () => {
  send({ type: "takeover", ...offered() });
  term.focus(); // the keys go to the terminal, not the button
});
new ResizeObserver(() => fitToWindow()).observe(document.getElementById("terminal"));

function connect() {
  const size = offered();
  const query = new URLSearchParams({ tab: state.tab, cols: String(size.cols), rows: String(size.rows) });
  if (observe) {
    query.set("observe", "1");
  }
  socket = new WebSocket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/tab?${query}`);
  socket.binaryType = "arraybuffer";
  socket.addEventListener("message", (event) => {
    if (typeof event.data !== "string") {
      const bytes = new Uint8Array(event.data);
      then(() => {
        term.write(bytes);
        state.bytes += bytes.length;
      });
      return;
    }
    const message = JSON.parse(event.data);
    switch (message.type) {
      case "screen":
        state.restored = false;
        fence();
        then(() => {
          applying = true;
          try {
            term.resize(message.cols, message.rows);
          } finally {
            applying = false;
          }
          // A full reset (RIS) in the terminal's own stream: screens, history, modes. ghostty-web's `reset()`
          // makes a new terminal that showed rows of the old one after a resize.
          term.write("\x1bc");
          state.role = message.role;
          state.bytes = 0;
          showRole();
        });
        break;
      case "restored":
        fence();
        then(() => {
          state.restores += 1;
          state.restored = true;
          fitToWindow();
        });
        break;
      case "role":
        then(() => {
          state.role = message.role;
          state.controller = message.controller;
          showRole();
          fitToWindow();
        });
        break;
      case "title":
        // The daemon's title (its emulator saw every OSC 0/2), so both renderers show the same.
        document.title = message.title || "opencode-pty";
        break;
      case "exited":
        then(() => {
          state.exitCode = message.exitCode;
          showRole();
        });
        break;
      case "error":
        report(message.message);
        break;
      default:
        break;
    }
  });
  socket.addEventListener("close", (event) => {
    // 4000: the server could not attach (the terminal is gone); the error message said why.
    if (state.exitCode === undefined && event.code !== 4000) {
      state.role = "connecting";
      showRole();
      setTimeout(connect, RECONNECT_MS);
    }
  });
}

/** The rows the terminal shows (its active screen), as text with trailing blanks trimmed. */
function screen() {
  const buffer = term.buffer.active;
  const rows = [];
  for (let row = 0; row < term.rows; row += 1) {
    rows.push((buffer.getLine(buffer.length - term.rows + row)?.translateToString(true) ?? "").trimEnd());
  }
  return rows;
}

/** Every row the terminal holds, history first. */
function history() {
  const buffer = term.buffer.active;
  const rows = [];
  for (let row = 0; row < buffer.length; row += 1) {
    rows.push((buffer.getLine(row)?.translateToString(true) ?? "").trimEnd());
  }
  return rows;
}

window.webTerminal = {
  state,
  fence,
  screen,
  history,
  size: () => ({ cols: term.cols, rows: term.rows }),
  alternate: () => term.buffer.active.type === "alternate",
};
connect();
term.focus();
