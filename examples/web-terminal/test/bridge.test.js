/** The bridge without a browser: a raw WebSocket as a tab, for its limits (refused connections, message size,
 * tab count) and its backpressure (a tab that reads nothing holds the child, then gets every byte). */

import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import WebSocket from "ws";
import { connect } from "node:net";
import { MAX_TABS, REQUEST_TIMEOUT_MS, startWebTerminal } from "../lib/web.js";
import { CANNOT_ATTACH, MAX_TAB_MESSAGE_BYTES, MAX_UNSENT_BYTES } from "../lib/session.js";
import { eventually, startDaemon } from "./support.js";

/** How long one test may take. */
const TEST_MS = 120_000;

/** Bytes the child prints while the tab reads nothing: well past everything that may hold output on the way
 * (the tab's send buffer, the sockets, the subscription's queue). */
const FLOOD_BYTES = 64 * 1024 * 1024;

/** A tab's WebSocket, collecting what the server sends. */
class RawTab {
  constructor(url, query, options = {}) {
    this.socket = new WebSocket(`${url.replace(/^http/, "ws").replace(/\/\?.*$/, "")}/tab?${new URLSearchParams(query)}`, options);
    this.messages = [];
    this.bytes = 0;
    this.text = "";
    this.closed = new Promise((resolve) => this.socket.on("close", (code) => resolve(code)));
    this.socket.on("message", (data, isBinary) => {
      if (isBinary) {
        this.bytes += data.length;
        this.text = (this.text + data.toString("latin1")).slice(-4096);
      } else {
        this.messages.push(JSON.parse(data.toString("utf8")));
      }
    });
    this.socket.on("error", () => {});
  }

  async attached() {
    await eventually("the tab attached", () => this.messages.some((message) => message.type === "restored"));
  }

  send(message) {
    this.socket.send(typeof message === "string" ? message : JSON.stringify(message));
  }
}

describe("the bridge", () => {
  let daemon;
  let stopDaemon;
  let web;
  let id;

  before(async () => {
    ({ daemon, stop: stopDaemon } = await startDaemon());
    const pty = await daemon.createPty({ program: "/bin/sh", cwd: "/", env: { PS1: "$ " }, cols: 80, rows: 24 });
    id = pty.id;
    web = await startWebTerminal({ daemon, id });
  });

  after(async () => {
    await web?.close();
    await stopDaemon?.();
  });

  test("refuses a tab without an id or a size, and one past MAX_TABS", { timeout: TEST_MS }, async () => {
    for (const query of [{ cols: "80", rows: "24" }, { tab: "a b", cols: "80", rows: "24" }, { tab: "t", cols: "0", rows: "24" }]) {
      assert.equal(await new RawTab(web.url, query).closed, 1008, JSON.stringify(query));
    }
    const tabs = Array.from({ length: MAX_TABS }, (_, index) => new RawTab(web.url, { tab: `t${index}`, cols: "80", rows: "24", observe: "1" }));
    await Promise.all(tabs.map((tab) => tab.attached()));
    assert.equal(await new RawTab(web.url, { tab: "one-too-many", cols: "80", rows: "24" }).closed, 1013);
    for (const tab of tabs) {
      tab.socket.close();
    }
    await Promise.all(tabs.map((tab) => tab.closed));
    const again = new RawTab(web.url, { tab: "after", cols: "80", rows: "24", observe: "1" });
    await again.attached(); // the closed tabs' places are free again
    again.socket.close();
    await again.closed;
  });

  test("refuses a page of another origin, takes one of its own", { timeout: TEST_MS }, async () => {
    const query = { tab: "origin", cols: "80", rows: "24", observe: "1" };
    assert.equal(await new RawTab(web.url, query, { origin: "http://evil.example" }).closed, 1008);
    const own = new RawTab(web.url, query, { origin: new URL(web.url).origin });
    await own.attached();
    own.socket.close();
    await own.closed;
  });

  test("says what is wrong with a message, and closes on one past MAX_TAB_MESSAGE_BYTES", { timeout: TEST_MS }, async () => {
    const tab = new RawTab(web.url, { tab: "limits", cols: "80", rows: "24", observe: "1" });
    await tab.attached();
    tab.send("not json");
    tab.send({ type: "launch" });
    tab.send({ type: "resize", cols: -1, rows: 2 });
    await eventually("three errors", () => tab.messages.filter((message) => message.type === "error").length === 3);
    const errors = tab.messages.filter((message) => message.type === "error").map((message) => message.message);
    assert.deepEqual(errors, [
      "a message from the page is not JSON",
      'unknown message type "launch"',
      "resize needs whole cols and rows above 0",
    ]);
    tab.send({ type: "input", data: "x".repeat(MAX_TAB_MESSAGE_BYTES) });
    assert.equal(await tab.closed, 1009, "too big");
  });

  test("a tab for a terminal that is gone is told why and not kept", { timeout: TEST_MS }, async () => {
    const other = await startWebTerminal({ daemon, id: 999 });
    try {
      const tab = new RawTab(other.url, { tab: "gone", cols: "80", rows: "24" });
      assert.equal(await tab.closed, CANNOT_ATTACH);
      assert.deepEqual(tab.messages, [{ type: "error", message: "process 999 not found" }]);
    } finally {
      await other.close();
    }
  });

  test("a quiet tab outlives the request timeout; half a request does not", { timeout: TEST_MS }, async () => {
    const tab = new RawTab(web.url, { tab: "quiet", cols: "80", rows: "24", observe: "1" });
    await tab.attached();
    const { port } = new URL(web.url);
    const half = connect(Number(port), "127.0.0.1");
    half.on("error", () => {});
    half.resume(); // read (and drop) the server's 408, so its close is seen
    half.write("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n"); // and never the end of the headers
    const cut = new Promise((resolve) => half.on("close", () => resolve(Date.now())));
    const started = Date.now();
    const cutAt = await cut;
    assert.ok(cutAt - started < 4 * REQUEST_TIMEOUT_MS, "a request that never ends is cut");
    // Past the request timeout, the quiet tab still gets what the terminal prints.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, started + 2 * REQUEST_TIMEOUT_MS - Date.now())));
    assert.equal(tab.socket.readyState, WebSocket.OPEN, "the quiet tab is still connected");
    await daemon.write(id, null, new TextEncoder().encode("echo still-here\r")); // no tab controls it now
    await eventually("output at the quiet tab", () => tab.text.includes("still-here"));
    tab.socket.close();
    await tab.closed;
  });

  test("a tab that reads nothing holds the child back, then gets every byte", { timeout: TEST_MS }, async () => {
    const tab = new RawTab(web.url, { tab: "slow", cols: "80", rows: "24" });
    await tab.attached();
    assert.equal(tab.messages.find((message) => message.type === "screen").role, "controller");
    const start = (await daemon.get(id)).output_tail;
    tab.socket.pause();
    tab.send({ type: "input", data: `head -c ${FLOOD_BYTES} /dev/zero | tr '\\0' x; echo; echo flood-end\r` });
    // The child prints until the output in flight fills every buffer on the way, then waits.
    let last = -1;
    let stillSince = Date.now();
    const held = await eventually("the output held back", async () => {
      const tail = (await daemon.get(id)).output_tail - start;
      if (tail !== last) {
        last = tail;
        stillSince = Date.now();
      }
      return tail > MAX_UNSENT_BYTES && Date.now() - stillSince > 1000 ? tail : null;
    });
    assert.ok(held < FLOOD_BYTES / 2, `the child was held back after ${held} bytes, not let run to the end`);
    tab.socket.resume();
    await eventually("every byte at the tab", () => tab.text.includes("flood-end"), async () => `${tab.bytes} bytes came`);
    assert.ok(tab.bytes >= FLOOD_BYTES, `${tab.bytes} bytes reached the tab`);
    tab.socket.close();
    await tab.closed;
  });
});
