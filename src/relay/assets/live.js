"use strict";
// boardscribe live page: follows /api/events and redraws each board from the snapshot an event
// carries; ticks running clocks down between events; re-reads /api/boards after a resync.
(function () {
  const only = document.body.dataset.only; // the board page shows one board
  // The page's words in its language (the server writes them; "{n}", "{result}" are blanks).
  const texts = JSON.parse(document.body.dataset.texts || "{}");
  function say(key, blanks) {
    let t = texts[key] || key;
    for (const k in blanks || {}) t = t.split("{" + k + "}").join(String(blanks[k]));
    return t;
  }
  // A player as the page writes them: the title and the name isolated (title, name and rating
  // in that order whichever way the name and the page run), rating; the side's word when the
  // pairing is not known.
  function player(el, p, side) {
    el.textContent = "";
    if (!p) { el.textContent = say(side); return; }
    if (p.title && p.title.trim()) {
      const title = document.createElement("bdi");
      title.textContent = p.title.trim();
      el.append(title, " ");
    }
    const name = document.createElement("bdi");
    name.textContent = p.name;
    el.append(name);
    if (p.elo != null) el.append(" (" + p.elo + ")");
  }
  const boards = new Map(); // name -> { clock, t0, seen }

  function info(name) {
    let b = boards.get(name);
    if (!b) { b = { clock: null, t0: 0, seen: 0 }; boards.set(name, b); }
    return b;
  }
  function section(name) {
    for (const el of document.querySelectorAll("main section.board")) {
      if (el.dataset.board === name) return el;
    }
    if (only !== undefined) return null;
    const tpl = document.getElementById("board-template");
    const main = document.querySelector("main.boards");
    if (!tpl || !main) return null;
    const el = tpl.content.firstElementChild.cloneNode(true);
    el.dataset.board = name;
    main.appendChild(el);
    return el;
  }
  function fmt(ms) {
    const s = Math.floor(Math.max(0, ms) / 1000);
    const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), x = s % 60;
    const mm = h ? h + ":" + String(m).padStart(2, "0") : String(m);
    return mm + ":" + String(x).padStart(2, "0");
  }
  function paintClocks(name) {
    const el = section(name), b = info(name);
    if (!el || !b.clock) return;
    const c = b.clock, gone = performance.now() - b.t0;
    for (const side of ["white", "black"]) {
      const span = el.querySelector('.clock[data-side="' + side + '"]');
      if (!span) continue;
      let ms = c[side + "_ms"];
      if (c.running === side) ms -= gone;
      span.textContent = fmt(ms);
      span.classList.toggle("running", c.running === side);
      span.classList.toggle("flag", !!c[side + "_flag"]);
    }
  }
  function setClock(name, c) {
    const b = info(name);
    b.clock = c; b.t0 = performance.now();
    paintClocks(name);
  }
  function render(s, view) {
    if (only !== undefined && s.name !== only) return;
    const el = section(s.name);
    if (!el) return;
    const b = info(s.name);
    if (view) {
      // A togyz korgool board's sides have the game's own words.
      const sides = s.kind === "togyz" ? ["togyz_white", "togyz_black"] : ["white", "black"];
      player(el.querySelector(".white-name"), view.white_player, sides[0]);
      player(el.querySelector(".black-name"), view.black_player, sides[1]);
    }
    const title = el.querySelector(".title");
    if (s.number != null) { title.textContent = say("board", { n: s.number }); title.href = "/boards/" + s.number; }
    else { title.textContent = s.name; title.href = "/boards/" + encodeURIComponent(s.name); }
    const conn = el.querySelector(".conn");
    conn.textContent = say(s.connection); conn.className = "conn " + s.connection;
    el.querySelector(".svg").innerHTML = s.svg;
    // The stores' names in the page's language (the stream draws them in English).
    el.querySelectorAll(".svg tspan.store-name[data-store]").forEach(function (t) {
      t.textContent = say("store_" + t.getAttribute("data-store"));
    });
    let last = "";
    if (s.last_move) {
      const m = s.last_move;
      last = Math.ceil(m.ply / 2) + (m.ply % 2 ? ". " : "... ") + m.san;
    }
    el.querySelector(".last-move").textContent = last;
    el.querySelector(".result").textContent =
      s.result ? (s.result_final ? s.result : say("pending", { result: s.result })) : "";
    const list = el.querySelector(".moves");
    list.textContent = "";
    s.moves.forEach(function (san, i) {
      const li = document.createElement("li");
      li.dataset.ply = String(i + 1);
      li.dataset.san = san;
      if (i % 2 === 0) {
        const n = document.createElement("span");
        n.className = "n";
        n.textContent = (i / 2 + 1) + ".";
        li.appendChild(n);
      }
      li.appendChild(document.createTextNode(san));
      list.appendChild(li);
    });
    list.scrollTop = list.scrollHeight; // the newest moves in view
    for (const side of ["white", "black"]) {
      const span = el.querySelector('.clock[data-side="' + side + '"]');
      if (span) span.classList.toggle("tt", !!s.time_trouble[side]);
    }
    if (s.clock) setClock(s.name, s.clock);
  }
  function reload() {
    fetch("/api/boards", { cache: "no-store" })
      .then(function (r) { return r.json(); })
      .then(function (all) {
        for (const view of all.boards) {
          const b = info(view.name);
          // A snapshot older than an event already shown would turn the board back.
          if (b.seen > all.last_event_id) continue;
          b.seen = all.last_event_id;
          render(view, view);
        }
      })
      .catch(function () { setTimeout(reload, 2000); });
  }
  const status = document.getElementById("status");
  // A server at its cap of event streams answers 503 and the browser gives the stream up: the
  // page then reads the boards every 10 s and asks for a stream again after 30 s.
  let polling = null;
  function connect() {
    const source = new EventSource("/api/events");
    source.onopen = function () {
      status.textContent = say("live"); status.className = "";
      if (polling) { clearInterval(polling); polling = null; }
      reload();
    };
    source.onerror = function () {
      if (source.readyState === EventSource.CLOSED) {
        status.textContent = say("busy"); status.className = "down";
        if (!polling) polling = setInterval(reload, 10000);
        setTimeout(connect, 30000);
      } else {
        status.textContent = say("reconnecting"); status.className = "down";
      }
    };
    source.addEventListener("resync", reload);
    source.addEventListener("clock", function (e) {
      const d = JSON.parse(e.data);
      if (only !== undefined && d.board !== only) return;
      const b = info(d.board);
      if (d.id <= b.seen) return;
      b.seen = d.id;
      setClock(d.board, d);
    });
    for (const kind of ["move", "revision", "takeback", "result", "flag_fall", "claimable",
                        "game_end", "game_started", "board_connected", "board_lost", "decision",
                        "store", "recovered", "record"]) {
      source.addEventListener(kind, function (e) {
        const d = JSON.parse(e.data);
        const b = info(d.board);
        if (d.id <= b.seen) return; // already in a snapshot read since
        b.seen = d.id;
        if (d.snapshot) render(d.snapshot, null);
        if (kind === "game_started") reload(); // new players
      });
    }
  }
  connect();
  setInterval(function () { for (const name of boards.keys()) paintClocks(name); }, 250);
  window.boardscribeLive = { boards: boards };
})();
