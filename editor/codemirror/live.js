// Writing together: the note's Y.Doc shared over /live/notes/<id>/ (y-websocket's
// protocol plus our message type 100: stored, saved, error), bound to CodeMirror and to the
// title input. A separate chunk, loaded by main.js only when the form has data-live-url, so the
// editor of a site without live editing downloads none of Yjs.
//
// The page starts as the editor always did: CodeMirror over the textarea's text, the HTTP
// autosave of static/js/editor.js. The server seeds the document, never the browser; when the
// first sync with the server completes, the editor switches to the shared text and the HTTP
// autosave stops (form[data-live] = "synced"/"offline"), because the server saves the merged
// text itself. A close that reconnecting cannot fix (4401, 4403, 4413) hands the editor back
// to the HTTP autosave (form[data-live] = "fallback") with a banner saying why.
import * as Y from "yjs";
import { WebsocketProvider } from "y-websocket";
import { IndexeddbPersistence, clearDocument } from "y-indexeddb";
import { yCollab, yUndoManagerKeymap } from "y-codemirror.next";
import * as decoding from "lib0/decoding";
import { keymap } from "@codemirror/view";

const MESSAGE_SCIDRAFT = 100;
// Close codes after which reconnecting cannot help (docs/architecture.md#writing-together,
// "The browser"); 4429 and 4400 reconnect.
const GIVE_UP = {
  4401: "you are signed out. Sign in again (in another tab), then reload this page.",
  4403: "you may no longer edit this note.",
  4413: "the note is too large to edit together.",
};
// A site served without its ASGI server answers the socket with 404 forever: after this many
// failed first attempts the page stops trying and stays on the HTTP autosave, quietly.
const FIRST_CONNECT_TRIES = 5;
const SENDING_AFTER_MS = 1000;
const OFFLINE_TEXT = "Offline — your edits are kept in this browser and merge when you reconnect";

// The WebSocket URL of a path such as /live/notes/12/: y-websocket v3 builds its URL as
// serverUrl + "/" + roomname, and strips the slashes that end serverUrl, so the note's segment
// with its slash is the room and the rest the server.
export function socketAddress(path, location) {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  const trimmed = path.replace(/\/+$/, "");
  const cut = trimmed.lastIndexOf("/");
  return {
    serverUrl: scheme + "//" + location.host + trimmed.slice(0, cut),
    roomname: trimmed.slice(cut + 1) + "/",
  };
}

// The edit that turns `from` into `to`, as one replaced range: what typing produces, and small
// enough that a concurrent edit elsewhere in the text survives the merge.
export function textChange(from, to) {
  let start = 0;
  const shorter = Math.min(from.length, to.length);
  while (start < shorter && from.charCodeAt(start) === to.charCodeAt(start)) start++;
  let end = 0;
  while (
    end < shorter - start &&
    from.charCodeAt(from.length - 1 - end) === to.charCodeAt(to.length - 1 - end)
  ) end++;
  return { at: start, remove: from.length - start - end, insert: to.slice(start, to.length - end) };
}

// Where `position` of the old text is in the new one, after a Y.Text delta: text inserted or
// deleted before it moves it; an insertion exactly at it goes after it (the caret of the person
// not typing stays put, as in the body).
export function mapThrough(delta, position) {
  let index = 0;
  let mapped = position;
  for (const step of delta) {
    if (index > position) break;
    if (step.retain) index += step.retain;
    else if (typeof step.insert === "string") {
      if (index < position) mapped += step.insert.length;
      // An insert does not move along the old text.
    } else if (step.delete) {
      const removedBefore = Math.max(0, Math.min(step.delete, position - index));
      mapped -= removedBefore;
      index += step.delete;
    }
  }
  return mapped;
}

function applyChange(ytext, change, origin) {
  if (!change.remove && !change.insert) return;
  ytext.doc.transact(() => {
    if (change.remove) ytext.delete(change.at, change.remove);
    if (change.insert) ytext.insert(change.at, change.insert);
  }, origin);
}

// What was typed before the first sync (base → mine), carried onto the server's text when the
// server still has the base around the edited range; otherwise the server's text wins and the
// typed copy stays in localStorage, offered for restoring by editor.js.
function carryOver(ytext, base, mine, origin) {
  const theirs = ytext.toString();
  if (mine === base || theirs === mine) return;
  const change = textChange(base, mine);
  if (theirs === base) {
    applyChange(ytext, change, origin);
    return;
  }
  const before = base.slice(0, change.at);
  const removed = base.slice(change.at, change.at + change.remove);
  if (theirs.startsWith(before) && theirs.slice(change.at, change.at + change.remove) === removed) {
    applyChange(ytext, change, origin);
  }
}

const COLOUR = /^#[0-9a-fA-F]{6}$/;
const COLOUR_LIGHT = /^#[0-9a-fA-F]{6}([0-9a-fA-F]{2})?$/;

// Every state but this tab's own, in place: a colour that is not #rrggbb (or, for the light
// one, #rrggbbaa) becomes a plain grey, and the name is text. The server restates presence with
// the colours it assigns; this holds should anything else reach the page.
function presenceChecked(awareness) {
  awareness.getStates().forEach((state, clientId) => {
    if (clientId === awareness.clientID || !state || typeof state !== "object") return;
    const user = state.user && typeof state.user === "object" ? state.user : {};
    const color = COLOUR.test(String(user.color)) ? user.color : "#6b7280";
    const colorLight = COLOUR_LIGHT.test(String(user.colorLight)) ? user.colorLight : color + "33";
    state.user = { ...user, name: String(user.name ?? "Someone"), color, colorLight };
  });
}

function storeName(base, generation) {
  return generation ? base + "-g" + generation : base;
}

// Reset more often than this, a note's older stores are left to the browser's own eviction.
const OLDER_STORES_CHECKED = 8;

// The stores of the documents before the last reset: deleted, and `report()` called once if
// any still held text typed offline (it cannot be merged; see the store's comment above).
function forgetOlderStores(base, generation, report) {
  let reported = false;
  for (let k = Math.max(0, generation - OLDER_STORES_CHECKED); k < generation; k++) {
    const name = storeName(base, k);
    const old = new Y.Doc();
    const store = new IndexeddbPersistence(name, old);
    store.whenSynced.then(() => {
      const kept = old.getText("body").length + old.getText("title").length;
      if (kept && !reported) {
        reported = true;
        report();
      }
      return store.destroy();
    }).then(() => clearDocument(name)).catch(() => {});
  }
}

export function startLive({ view, form, historyCompartment, history }) {
  const noteId = form.getAttribute("data-note-id");
  const title = form.querySelector("input[name=title]");
  const version = form.querySelector("input[name=base_version]");
  const status = document.querySelector(".editor-live-status");
  const savedStatus = document.querySelector(".editor-autosave-status");
  const banner = document.querySelector(".editor-live-banner");
  const presence = document.querySelector(".editor-presence");
  const me = {
    name: form.getAttribute("data-live-name") || "Someone",
    color: form.getAttribute("data-live-color") || "#1d6fb8",
    id: form.getAttribute("data-live-user") || "",
  };

  const doc = new Y.Doc();
  const ybody = doc.getText("body");
  const ytitle = doc.getText("title");
  // Kept across reloads: edits made offline are still here when the page comes back, and
  // merge when the socket syncs. One store per person: two people signing in on one browser
  // profile must not send each other's unsynced edits in their own name.
  // And one store per live document: after an Editor resets it (data-live-generation counts the
  // resets), what the browser kept of the old document would merge into the new one as a second
  // copy of the text, so the older stores are read, reported and deleted instead.
  const generation = parseInt(form.getAttribute("data-live-generation") || "0", 10) || 0;
  const storeBase = "scidraft-note-" + noteId + "-user-" + me.id;
  const persistence = new IndexeddbPersistence(storeName(storeBase, generation), doc);
  const address = socketAddress(form.getAttribute("data-live-url"), window.location);
  const provider = new WebsocketProvider(address.serverUrl, address.roomname, doc, {
    // y-websocket gives up on every 44xx; we retry after a rate-limit or malformed close.
    shouldReconnect: (event) => !(event.code in GIVE_UP),
  });
  provider.awareness.setLocalStateField("user", {
    name: me.name,
    color: me.color,
    colorLight: me.color + "33",
    id: me.id,
  });
  // Before y-codemirror.next draws them (its listener comes later, at the first sync), the
  // others' states are made safe: it writes their colours into style attributes.
  provider.awareness.on("change", () => presenceChecked(provider.awareness));

  // The title and body as the server sent them with the page (the fields' default values):
  // what the server's first sync is compared with, so that whatever was typed since, even in
  // the plain textarea before the editor's script ran, is carried over onto the shared text.
  const source = form.querySelector("textarea[name=body]");
  const loaded = {
    body: source ? source.defaultValue : view.state.doc.toString(),
    title: title ? title.defaultValue : "",
  };
  const titleOrigin = { title: true };
  let bound = false;
  let gaveUp = false;
  let storedClock = 0;
  let sendingTimer = 0;
  // The version whose other fields (everything but title and body) this form shows.
  const fieldsLoadedAt = version ? parseInt(version.value, 10) : 0;
  let fieldsWarned = false;
  let bannerFromClose = false;

  function setMode(mode) {
    form.setAttribute("data-live", mode);
    form.dispatchEvent(new CustomEvent("scidraft:live", { detail: { mode } }));
  }

  function say(text, state) {
    if (!status) return;
    status.textContent = text;
    status.setAttribute("data-state", state);
  }

  function showStored() {
    if (!bound || gaveUp) return;
    if (!provider.wsconnected || !provider.synced) {
      say(OFFLINE_TEXT, "offline");
      return;
    }
    const clock = Y.getState(doc.store, doc.clientID);
    if (storedClock >= clock) {
      clearTimeout(sendingTimer);
      sendingTimer = 0;
      say("All changes stored", "stored");
    } else if (!sendingTimer) {
      // Acknowledged within a moment, typing never shows "Sending…": the status (read out by
      // screen readers) changes only when storing lags.
      sendingTimer = setTimeout(() => {
        sendingTimer = 0;
        if (storedClock < Y.getState(doc.store, doc.clientID) && provider.wsconnected) say("Sending…", "sending");
        else showStored();
      }, SENDING_AFTER_MS);
    }
  }

  function showBanner(text) {
    if (!banner) return;
    banner.textContent = text;
    banner.hidden = false;
  }

  forgetOlderStores(storeBase, generation, () =>
    showBanner(
      "An Editor reset this note's shared document: edits this browser kept offline from " +
        "before the reset could not be merged and were discarded.",
    ),
  );

  // --- The first sync: switch the editor to the shared text -----------------------------------

  function bind() {
    bound = true;
    carryOver(ybody, loaded.body, view.state.doc.toString(), "carry-over");
    if (title) carryOver(ytitle, loaded.title, title.value, titleOrigin);
    const shared = ybody.toString();
    const change = textChange(view.state.doc.toString(), shared);
    if (change.remove || change.insert) {
      view.dispatch({ changes: { from: change.at, to: change.at + change.remove, insert: change.insert } });
    }
    // Undo undoes this person's typing only, never a collaborator's.
    const undoManager = new Y.UndoManager(ybody);
    view.dispatch({
      effects: historyCompartment.reconfigure([
        yCollab(ybody, provider.awareness, { undoManager }),
        keymap.of(yUndoManagerKeymap),
      ]),
    });
    if (title) {
      setTitle(ytitle.toString(), null);
      title.addEventListener("input", titleTyped);
      ytitle.observe(titleChanged);
    }
    setMode("synced");
    showStored();
    renderPresence();
  }

  function titleTyped() {
    applyChange(ytitle, textChange(ytitle.toString(), title.value), titleOrigin);
  }

  // A collaborator's title edit, with the caret kept where it was relative to the text.
  function setTitle(text, delta) {
    if (title.value === text) return;
    const focused = document.activeElement === title;
    let start = title.selectionStart;
    let end = title.selectionEnd;
    if (delta && start !== null) {
      start = mapThrough(delta, start);
      end = mapThrough(delta, end);
    }
    title.value = text;
    if (focused && start !== null) title.setSelectionRange(Math.min(start, text.length), Math.min(end, text.length));
    // The page's other listeners (the heading, the slug) see the change; editor.js ignores it
    // while the socket saves.
    title.dispatchEvent(new Event("input", { bubbles: true }));
  }

  function titleChanged(event, transaction) {
    if (transaction.origin === titleOrigin) return;
    setTitle(ytitle.toString(), event.delta);
  }

  provider.on("sync", (synced) => {
    if (synced && !bound && !gaveUp) bind();
    // A rate-limit close said so in the banner; synced again, it no longer applies.
    if (synced && !gaveUp && banner && bannerFromClose) {
      banner.hidden = true;
      bannerFromClose = false;
    }
    showStored();
  });
  provider.on("status", () => showStored());
  doc.on("update", (update, origin) => {
    if (origin !== provider && origin !== persistence) showStored();
  });

  // --- Our message type 100: stored, saved, error ---------------------------------------------

  provider.messageHandlers[MESSAGE_SCIDRAFT] = (encoder, decoder) => {
    let message;
    try {
      message = JSON.parse(decoding.readVarString(decoder));
    } catch (error) {
      return;
    }
    if (message.type === "stored") {
      const bytes = Uint8Array.from(atob(message.sv || ""), (c) => c.charCodeAt(0));
      storedClock = Math.max(storedClock, Y.decodeStateVector(bytes).get(doc.clientID) || 0);
      showStored();
    } else if (message.type === "saved") {
      // Save and Publish post this version: they must not conflict with the merged saves.
      // Unless someone's Save changed the other fields (tags, summary…) after this form
      // loaded them (fields_version): posting them unseen would undo that, so the form keeps
      // its version and a Save gets the conflict page with both versions.
      const fieldsCurrent = !(message.fields_version > fieldsLoadedAt);
      if (version && Number.isInteger(message.version) && fieldsCurrent) {
        version.value = String(message.version);
      } else if (!fieldsCurrent && !fieldsWarned) {
        fieldsWarned = true;
        showBanner(
          "Someone saved other fields of this note (tags, summary…) since you opened it. " +
            "Reload the page to see them before you save; the text you write together is saved meanwhile."
        );
      }
      const at = new Date().toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
      let line = "Saved at " + at + " · revision " + message.revision;
      if (Array.isArray(message.by) && message.by.length) line += " (" + message.by.join(", ") + ")";
      if (savedStatus) {
        savedStatus.textContent = line;
        savedStatus.setAttribute("data-state", "saved");
      }
      form.dispatchEvent(new CustomEvent("scidraft:live-saved", { detail: message }));
    } else if (message.type === "error") {
      showBanner(String(message.message || "The shared document reported an error."));
      bannerFromClose = true;
    }
  };

  // --- Giving up: back to the HTTP autosave ---------------------------------------------------

  provider.on("closed", (event) => {
    if (!(event.code in GIVE_UP)) return;
    gaveUp = true;
    provider.disconnect();
    provider.destroy();
    // From now on the HTTP autosave owns the text; edits kept for the socket would be merged
    // a second time (the server turns HTTP saves into document edits) if they came back later.
    persistence.clearData();
    view.dispatch({ effects: historyCompartment.reconfigure(history) });
    if (title) {
      title.removeEventListener("input", titleTyped);
      ytitle.unobserve(titleChanged);
    }
    const why = GIVE_UP[event.code];
    if (!banner || banner.hidden) {
      showBanner("Writing together stopped: " + why + " Your edits are autosaved as before.");
    } else {
      banner.textContent += " Writing together stopped; your edits are autosaved as before.";
    }
    say("Not connected", "fallback");
    if (presence) presence.replaceChildren();
    setMode("fallback");
  });

  provider.on("connection-close", () => {
    if (bound || gaveUp || provider.wsUnsuccessfulReconnects < FIRST_CONNECT_TRIES) return;
    gaveUp = true;
    provider.destroy();
    say("Writing together is unavailable here; your edits are autosaved as before", "fallback");
    setMode("fallback");
  });

  // --- Who is here ------------------------------------------------------------------------------

  function initials(name) {
    const words = name.trim().split(/\s+/).filter(Boolean);
    const letters = words.length > 1 ? words[0][0] + words[words.length - 1][0] : (words[0] || "?").slice(0, 2);
    return letters.toUpperCase();
  }

  // One entry per person (a person with two tabs open is one collaborator), others only; names
  // are user input and only ever go into textContent and title attributes.
  function renderPresence() {
    if (!presence) return;
    const people = new Map();
    provider.awareness.getStates().forEach((state, clientId) => {
      if (clientId === doc.clientID || !state || !state.user) return;
      const user = state.user;
      const key = String(user.id || user.name);
      if (String(user.id) === String(me.id) && me.id) return;
      if (!people.has(key)) people.set(key, user);
    });
    const items = [...people.values()]
      .sort((a, b) => String(a.name).localeCompare(String(b.name)))
      .map((user) => {
        const item = document.createElement("li");
        item.className = "editor-presence-person";
        const name = String(user.name || "Someone");
        item.title = name + " is editing";
        const badge = document.createElement("span");
        badge.className = "editor-presence-badge";
        badge.textContent = initials(name);
        badge.setAttribute("aria-hidden", "true");
        if (/^#[0-9a-fA-F]{6}$/.test(user.color || "")) badge.style.backgroundColor = user.color;
        const label = document.createElement("span");
        label.className = "editor-presence-name";
        label.textContent = name;
        item.append(badge, label);
        return item;
      });
    presence.replaceChildren(...items);
    presence.setAttribute("data-count", String(items.length));
    const holder = presence.closest(".editor-live");
    if (holder) holder.setAttribute("data-alone", items.length ? "false" : "true");
  }
  provider.awareness.on("change", () => {
    if (bound && !gaveUp) renderPresence();
  });

  const holder = document.querySelector(".editor-live");
  if (holder) holder.hidden = false;
  say("Connecting…", "connecting");
  setMode("connecting");
  window.addEventListener("pagehide", () => provider.awareness.setLocalState(null));
  // A socket can outlive the network for a long while before it notices; the browser knows at
  // once. Typing goes on into the document (and IndexedDB) and is sent on reconnecting.
  window.addEventListener("offline", () => {
    if (gaveUp) return;
    provider.disconnect();
    showStored();
  });
  window.addEventListener("online", () => {
    if (!gaveUp) provider.connect();
  });
  return { doc, provider, persistence };
}
