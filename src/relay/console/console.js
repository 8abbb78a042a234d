// The arbiter's console (boardscribe): refreshes the page's #live part every few seconds from
// the same URL with ?fragment=1 (not while the arbiter is typing in it), and signals an alert
// that was not on the page before: the header turns red, a banner names the board, the title
// gets "(!)", and a short beep sounds when the "sound" box is ticked (kept in localStorage).
(function () {
  'use strict';
  var live = document.getElementById('live');
  if (!live) return;
  var signal = document.getElementById('alert-signal');
  var sound = document.getElementById('sound');
  var SOUND_KEY = 'boardscribe.console.sound';
  if (sound) {
    try { sound.checked = localStorage.getItem(SOUND_KEY) === '1'; } catch (e) { /* private mode */ }
    sound.addEventListener('change', function () {
      try { localStorage.setItem(SOUND_KEY, sound.checked ? '1' : '0'); } catch (e) { /* ignore */ }
      if (sound.checked) beep();
    });
  }

  function alertsIn(root) {
    var found = {};
    root.querySelectorAll('li.alert[data-alert]').forEach(function (li) {
      found[li.getAttribute('data-alert')] = li.getAttribute('data-board-title') || '';
    });
    return found;
  }
  var seen = alertsIn(live);

  var audio = null;
  function beep() {
    try {
      var Ctx = window.AudioContext || window.webkitAudioContext;
      if (!Ctx) return;
      audio = audio || new Ctx();
      var osc = audio.createOscillator();
      var gain = audio.createGain();
      osc.frequency.value = 880;
      gain.gain.value = 0.2;
      osc.connect(gain);
      gain.connect(audio.destination);
      osc.start();
      osc.stop(audio.currentTime + 0.35);
    } catch (e) { /* no sound: the banner still shows */ }
  }

  function signalNew(boards) {
    document.body.classList.add('alerting');
    if (signal) {
      signal.querySelector('span').textContent = boards.join(', ');
      signal.hidden = false;
    }
    if (document.title.indexOf('(!) ') !== 0) document.title = '(!) ' + document.title;
    if (sound && sound.checked) beep();
  }

  function dismiss() {
    document.body.classList.remove('alerting');
    if (signal) signal.hidden = true;
    document.title = document.title.replace(/^\(!\) /, '');
  }
  if (signal) signal.addEventListener('click', dismiss);

  // Typing or choosing in a form of the live part, or a choice made and not yet sent: do not
  // replace it under the arbiter's hand.
  function changed(el) {
    if (el.tagName === 'SELECT') {
      return Array.prototype.some.call(el.options, function (o) {
        return o.selected !== o.defaultSelected;
      });
    }
    if (el.type === 'checkbox' || el.type === 'radio') return el.checked !== el.defaultChecked;
    return el.type !== 'hidden' && el.value !== el.defaultValue;
  }
  function busy() {
    var a = document.activeElement;
    if (a && a !== document.body && live.contains(a) &&
        /^(INPUT|SELECT|TEXTAREA)$/.test(a.tagName)) return true;
    return Array.prototype.some.call(live.querySelectorAll('input, select, textarea'), changed);
  }

  function refresh() {
    if (busy()) return;
    var url = new URL(window.location.href);
    url.searchParams.delete('msg');
    url.searchParams.delete('err');
    url.searchParams.set('fragment', '1');
    fetch(url.toString(), { credentials: 'same-origin', cache: 'no-store' })
      .then(function (r) {
        if (r.status === 401) { window.location.reload(); return null; }
        return r.ok ? r.text() : null;
      })
      .then(function (html) {
        if (html === null || busy()) return;
        var next = document.createElement('div');
        next.innerHTML = html;
        var now = alertsIn(next);
        var fresh = [];
        Object.keys(now).forEach(function (id) {
          if (!(id in seen)) fresh.push(now[id] || id);
          seen[id] = now[id];
        });
        live.innerHTML = html;
        if (fresh.length) signalNew(fresh);
      })
      .catch(function () { /* the server is away: try again next time */ });
  }
  window.setInterval(refresh, 3000);
})();
