// SPDX-License-Identifier: Apache-2.0
//
// map.js — the placement map page.  It polls /ui/api/placement (with
// ?since=GENERATION, so a quiet cluster costs a few bytes), keeps one
// <canvas> per domain (superslice or block) and redraws a canvas only when
// its domain changed.  Canvases in view are drawn first (IntersectionObserver),
// the rest in time slices of a few milliseconds, so a 16,384-host cluster
// never blocks the page.  Each canvas holds, as fallback content, a list of
// its cubes with their host counts (what screen readers and the tests read).
//
// When everything of the first answer is drawn, <body> gets data-render-ms
// (milliseconds since navigation), data-draw-ms (since the answer arrived)
// and data-drawn-hosts; data-longest-task-ms is the longest task that held
// the page (a long-task entry, over 50 ms), if any.  Host colours are stable: the hue comes from the
// root gang's name, the shade from the sub-group's name.
'use strict';
(function () {
  const API = '/ui/api/placement';
  const POLL_MS = 2000;
  const SLICE_MS = 12;
  const CUBE_GAP = 10;
  const PAD = 5;
  const TOKEN_KEY = 'podkernel-token';

  let token = null;
  let gen = 0;
  let data = null;
  let colors = [];
  let pollTimer = null;
  let firstDone = false;
  let drawStart = 0;
  let drawnHosts = 0;
  const domains = new Map(); // name -> state
  const dirty = new Set();
  const $ = (s) => document.querySelector(s);

  // ---- access -------------------------------------------------------------------
  // #token=T stores a token (then leaves the address bar); #node=NAME opens a host.
  let openNode = null;
  function takeToken() {
    const m = location.hash.match(/token=([^&]+)/);
    const n = location.hash.match(/node=([^&]+)/);
    if (n) openNode = decodeURIComponent(n[1]);
    if (m) {
      sessionStorage.setItem(TOKEN_KEY, decodeURIComponent(m[1]));
      history.replaceState(null, '', location.pathname + location.search + (n ? '#node=' + n[1] : ''));
    }
    token = sessionStorage.getItem(TOKEN_KEY);
  }

  function showLogin(status) {
    clearTimeout(pollTimer);
    $('#login-why').textContent = status === 403
      ? 'This token may not read the placement map. Try another one.'
      : 'This podkerneld requires a bearer token (its --token-auth-file).';
    $('#login').hidden = false;
    $('main').hidden = true;
    setStatus('token needed', true);
    $('#token').focus();
  }

  $('#login').addEventListener('submit', (e) => {
    e.preventDefault();
    token = $('#token').value.trim();
    sessionStorage.setItem(TOKEN_KEY, token);
    $('#login').hidden = true;
    $('main').hidden = false;
    gen = 0;
    poll();
  });

  async function fetchJSON(url) {
    const headers = { Accept: 'application/json' };
    if (token) headers.Authorization = 'Bearer ' + token;
    const r = await fetch(url, { headers, cache: 'no-store' });
    if (r.status === 401 || r.status === 403) {
      showLogin(r.status);
      const e = new Error('auth');
      e.auth = true;
      throw e;
    }
    if (!r.ok) throw new Error('HTTP ' + r.status);
    return r.json();
  }

  function setStatus(text, error) {
    const s = $('#status');
    s.textContent = text;
    s.classList.toggle('error', !!error);
  }

  async function poll() {
    clearTimeout(pollTimer);
    try {
      const d = await fetchJSON(API + (gen ? '?since=' + gen : ''));
      if (!d.unchanged) render(d);
      if (openNode) {
        showDetail(openNode);
        openNode = null;
      }
      gen = d.generation;
      setStatus('generation ' + gen + ' · ' + new Date().toLocaleTimeString());
    } catch (e) {
      if (e.auth) return;
      setStatus('cannot reach podkerneld: ' + e.message, true);
    }
    pollTimer = setTimeout(poll, POLL_MS);
  }

  // ---- colours --------------------------------------------------------------------
  function hash(s) {
    let h = 2166136261;
    for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
    return h >>> 0;
  }

  function groupColor(g, groups) {
    const root = groups[g.root] || g;
    const hue = (hash(root.namespace + '/' + root.name) * 137.508) % 360;
    const light = g.id === g.root ? 48 : 34 + (hash(g.name) % 5) * 7;
    return 'hsl(' + hue.toFixed(1) + ' 62% ' + light + '%)';
  }

  // ---- DOM helpers --------------------------------------------------------------------
  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const k in attrs || {}) {
      if (k === 'class') e.className = attrs[k];
      else if (k === 'text') e.textContent = attrs[k];
      else e.setAttribute(k, attrs[k]);
    }
    for (const c of kids) if (c != null) e.append(c);
    return e;
  }

  function groupName(g) {
    return g ? g.namespace + '/' + g.name : '';
  }

  // ---- side panel ---------------------------------------------------------------------
  function renderSummary(d) {
    const s = d.summary;
    const box = $('#summary');
    box.replaceChildren();
    const items = [['hosts', s.hosts], ['busy', s.busy], ['free', s.free], ['cordoned', s.cordoned],
      ['unreachable', s.unreachable], ['pods bound', s.boundPods + '/' + s.pods],
      ['pending gangs', s.pendingGangs]];
    for (const [k, v] of items) box.append(el('span', { 'data-k': k }, el('b', { text: String(v) }), ' ' + k));
  }

  function renderPending(d) {
    const ul = $('#pending');
    ul.replaceChildren();
    $('#pending-count').textContent = '(' + d.pending.length + ')';
    if (!d.pending.length) ul.append(el('li', { class: 'muted', text: 'none' }));
    for (const id of d.pending) {
      const g = d.groups[id];
      ul.append(el('li', { 'data-group': groupName(g) },
        el('div', null, el('b', { text: groupName(g) }), ' ',
          el('span', { class: 'muted', text: g.kind + ' · ' + g.boundPods + '/' + g.pods + ' pods bound' })),
        el('div', { class: 'reason', text: g.reason || 'waiting' }),
        g.message ? el('div', { class: 'msg', text: g.message }) : null));
    }
  }

  function renderFree(d) {
    const tb = $('#free tbody');
    tb.replaceChildren();
    for (const dom of d.domains) {
      const f = dom.largestFree;
      const what = f.hosts == null ? 'too large to search'
        : f.shape ? f.shape + ' chips at ' + f.origin : f.cube ? 'in ' + f.cube : '—';
      tb.append(el('tr', { 'data-domain': dom.name }, el('td', { text: dom.name }), el('td', { text: what }),
        el('td', { text: f.hosts == null ? '?' : String(f.hosts) }), el('td', { text: String(f.freeCubes) })));
    }
  }

  function renderLegend(d) {
    const ul = $('#legend');
    ul.replaceChildren();
    // hosts per root gang: its own and its sub-groups'
    const total = new Map();
    const kids = new Map();
    for (const g of d.groups) {
      total.set(g.root, (total.get(g.root) || 0) + g.hosts);
      if (g.root !== g.id && g.hosts > 0) {
        if (!kids.has(g.root)) kids.set(g.root, []);
        kids.get(g.root).push(g);
      }
    }
    const roots = d.groups.filter((g) => g.root === g.id && total.get(g.id) > 0);
    if (!roots.length) ul.append(el('li', { class: 'muted', text: 'no gang holds a host' }));
    let shown = 0;
    for (const r of roots) {
      if (++shown > 300) {
        ul.append(el('li', { class: 'muted', text: (roots.length - 300) + ' more' }));
        break;
      }
      ul.append(el('li', { 'data-group': groupName(r) }, swatch(colors[r.id]),
        el('span', { text: groupName(r) + (r.sliceShape ? ' · slice ' + r.sliceShape : '') }),
        el('span', { class: 'n', text: total.get(r.id) + ' hosts' })));
      const list = kids.get(r.id) || [];
      for (const g of list.slice(0, 12)) {
        ul.append(el('li', { class: 'child' }, swatch(colors[g.id]),
          el('span', { text: g.name + (g.sliceShape ? ' · slice ' + g.sliceShape : '') }),
          el('span', { class: 'n', text: String(g.hosts) })));
      }
      if (list.length > 12) ul.append(el('li', { class: 'child muted', text: (list.length - 12) + ' more groups' }));
    }
  }

  function swatch(color) {
    const s = el('i', { class: 'sw' });
    s.style.background = color;
    return s;
  }

  async function showDetail(name) {
    const box = $('#detail');
    box.textContent = 'loading ' + name + '…';
    try {
      const n = await fetchJSON(API + '?node=' + encodeURIComponent(name));
      const labels = el('table');
      for (const k of Object.keys(n.labels).sort()) {
        labels.append(el('tr', null, el('td', { text: k }), el('td', { text: n.labels[k] })));
      }
      const pods = el('ul', { class: 'pods' });
      for (const p of n.pods) {
        const group = p.group ? ' → ' + p.group + (p.root && p.root !== p.group ? ' (' + p.root + ')' : '') : '';
        const slice = p.sliceCoords ? ' · slice ' + p.sliceCoords + (p.workerId != null ? ' worker ' + p.workerId : '') : '';
        pods.append(el('li', { text: p.namespace + '/' + p.name + group + slice }));
      }
      if (!n.pods.length) pods.append(el('li', { class: 'muted', text: 'no pods' }));
      box.setAttribute('data-node', n.name);
      box.setAttribute('data-pods', String(n.pods.length));
      box.replaceChildren(el('div', null, el('b', { text: n.name }), ' ', el('span', { class: 'muted', text: n.state })),
        labels, el('div', { class: 'muted', text: 'pods' }), pods);
    } catch (e) {
      if (!e.auth) box.textContent = name + ': ' + e.message;
    }
  }

  // ---- domains ------------------------------------------------------------------------
  function cellSize(dom) {
    const wide = Math.max(1, dom.grid.cols * dom.cubeSize.cols);
    return Math.max(7, Math.min(20, Math.floor(340 / wide)));
  }

  function createDomain(dom) {
    const st = { name: dom.name, sig: '', dom: null, cells: null };
    st.title = el('h3');
    st.canvas = el('canvas', { role: 'img' });
    st.list = el('ul', { class: 'cubes' });
    st.canvas.append(st.list);
    st.el = el('section', { class: 'domain', 'data-domain': dom.name }, st.title, st.canvas);
    st.canvas.addEventListener('mousemove', (e) => hover(st, e));
    st.canvas.addEventListener('mouseleave', () => { $('#tip').hidden = true; });
    st.canvas.addEventListener('click', (e) => {
      const h = hit(st, e);
      if (h) showDetail(h.name);
    });
    observer.observe(st.canvas);
    return st;
  }

  function updateDomain(st, dom) {
    const cell = cellSize(dom);
    const cw = dom.cubeSize.cols * cell + CUBE_GAP;
    const ch = dom.cubeSize.rows * cell + CUBE_GAP;
    st.dom = dom;
    st.cell = cell;
    st.cw = cw;
    st.ch = ch;
    st.width = dom.grid.cols * cw - CUBE_GAP + 2 * PAD;
    st.height = dom.grid.rows * ch - CUBE_GAP + 2 * PAD;
    st.cells = null;
    const c = dom.counts;
    st.title.replaceChildren(dom.name, el('small', { text: c.hosts + (c.hosts === 1 ? ' host · ' : ' hosts · ') + c.busy + ' busy · ' + c.free + ' free' +
      (c.cordoned ? ' · ' + c.cordoned + ' cordoned' : '') + (c.unreachable ? ' · ' + c.unreachable + ' unreachable' : '') }));
    st.canvas.setAttribute('aria-label', dom.name + ': ' + c.busy + ' busy, ' + c.free + ' free of ' + c.hosts + ' hosts');
    // fallback content: one item per cube with the counts this page draws
    st.list.replaceChildren();
    for (const cube of dom.cubes) {
      const n = { busy: 0, free: 0, cordoned: 0, unreachable: 0 };
      for (const h of cube.hosts) n[h.state]++;
      st.list.append(el('li', { 'data-cube': cube.name, 'data-hosts': cube.hosts.length, 'data-busy': n.busy,
        'data-free': n.free, 'data-cordoned': n.cordoned, 'data-unreachable': n.unreachable,
        text: cube.name + ': ' + n.busy + ' busy, ' + n.free + ' free' }));
    }
    st.el.removeAttribute('data-drawn');
    dirty.add(st);
  }

  function hatch(ctx, x, y, s) {
    ctx.save();
    ctx.beginPath();
    ctx.rect(x, y, s, s);
    ctx.clip();
    ctx.strokeStyle = 'rgba(60,70,80,.55)';
    ctx.lineWidth = 1;
    ctx.beginPath();
    for (let k = -s; k < s; k += 4) {
      ctx.moveTo(x + k, y + s);
      ctx.lineTo(x + k + s, y);
    }
    ctx.stroke();
    ctx.restore();
  }

  const MAX_PIXELS = 1 << 26;

  function draw(st) {
    const dom = st.dom;
    const cv = st.canvas;
    const dpr = window.devicePixelRatio || 1;
    if (st.width * st.height * dpr * dpr > MAX_PIXELS) {
      // labels that make no sense as a torus: say so instead of a canvas no browser holds
      st.title.append(el('small', { text: ' · too large to draw' }));
      st.el.setAttribute('data-drawn', '1');
      return dom.cubes.reduce((a, c) => a + c.hosts.length, 0);
    }
    if (cv.width !== Math.round(st.width * dpr)) {
      cv.width = Math.round(st.width * dpr);
      cv.height = Math.round(st.height * dpr);
      cv.style.width = st.width + 'px';
      cv.style.height = st.height + 'px';
    }
    const ctx = cv.getContext('2d');
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, st.width, st.height);
    const s = st.cell;
    const inner = s > 8 ? s - 2 : s - 1;
    let hosts = 0;
    for (const cube of dom.cubes) {
      const ox = PAD + cube.col * st.cw;
      const oy = PAD + cube.row * st.ch;
      ctx.fillStyle = '#eef1f4';
      ctx.fillRect(ox - 3, oy - 3, cube.cols * s + 4, cube.rows * s + 4);
      ctx.strokeStyle = '#c3cbd4';
      ctx.lineWidth = 1;
      ctx.strokeRect(ox - 3.5, oy - 3.5, cube.cols * s + 5, cube.rows * s + 5);
      for (const h of cube.hosts) {
        const x = ox + h.x * s;
        const y = oy + h.y * s;
        ctx.fillStyle = h.group != null ? colors[h.group] : h.pods ? '#5b6673' : '#dfe4e9';
        ctx.fillRect(x, y, inner, inner);
        if (h.state === 'cordoned') hatch(ctx, x, y, inner);
        if (h.state === 'unreachable') {
          ctx.strokeStyle = '#c0392b';
          ctx.lineWidth = Math.max(1.5, s / 7);
          ctx.strokeRect(x + 1, y + 1, inner - 2, inner - 2);
          ctx.beginPath();
          ctx.moveTo(x + 2, y + 2);
          ctx.lineTo(x + inner - 2, y + inner - 2);
          ctx.moveTo(x + inner - 2, y + 2);
          ctx.lineTo(x + 2, y + inner - 2);
          ctx.stroke();
        }
        hosts++;
      }
    }
    outlineSlices(ctx, st);
    st.el.setAttribute('data-drawn', '1');
    return hosts;
  }

  // TPU slices: the outline of the host cells of each group with a slice shape.
  function outlineSlices(ctx, st) {
    const s = st.cell;
    const sliced = new Map();
    for (const cube of st.dom.cubes) {
      for (const h of cube.hosts) {
        const g = h.group != null ? data.groups[h.group] : null;
        if (!g || !g.sliceShape) continue;
        if (!sliced.has(g.id)) sliced.set(g.id, new Set());
        sliced.get(g.id).add(cube.col + ',' + cube.row + ',' + h.x + ',' + h.y);
      }
    }
    ctx.strokeStyle = '#111';
    ctx.lineWidth = 2;
    for (const cells of sliced.values()) {
      ctx.beginPath();
      for (const key of cells) {
        const [cc, cr, x, y] = key.split(',').map(Number);
        const px = PAD + cc * st.cw + x * s - 1;
        const py = PAD + cr * st.ch + y * s - 1;
        const has = (dx, dy) => cells.has(cc + ',' + cr + ',' + (x + dx) + ',' + (y + dy));
        if (!has(-1, 0)) { ctx.moveTo(px, py); ctx.lineTo(px, py + s); }
        if (!has(1, 0)) { ctx.moveTo(px + s, py); ctx.lineTo(px + s, py + s); }
        if (!has(0, -1)) { ctx.moveTo(px, py); ctx.lineTo(px + s, py); }
        if (!has(0, 1)) { ctx.moveTo(px, py + s); ctx.lineTo(px + s, py + s); }
      }
      ctx.stroke();
    }
  }

  function drawOne(st) {
    if (!dirty.has(st)) return;
    dirty.delete(st);
    drawnHosts += draw(st);
  }

  // Visible canvases first, then the rest in slices; marks completion once.
  const observer = new IntersectionObserver((entries) => {
    for (const e of entries) {
      if (!e.isIntersecting) continue;
      const st = domains.get(e.target.parentElement.getAttribute('data-domain'));
      if (st) drawOne(st);
    }
  });

  function drain() {
    const t = performance.now();
    for (const st of dirty) {
      drawOne(st);
      if (performance.now() - t > SLICE_MS) break;
    }
    if (dirty.size) {
      setTimeout(drain, 0);
      return;
    }
    if (!firstDone) {
      firstDone = true;
      const b = document.body;
      b.setAttribute('data-render-ms', performance.now().toFixed(1));
      b.setAttribute('data-draw-ms', (performance.now() - drawStart).toFixed(1));
      b.setAttribute('data-drawn-hosts', String(drawnHosts));
    }
    document.body.setAttribute('data-generation', String(gen || (data && data.generation)));
  }

  function render(d) {
    drawStart = performance.now();
    data = d;
    colors = d.groups.map((g) => groupColor(g, d.groups));
    renderSummary(d);
    renderPending(d);
    renderFree(d);
    renderLegend(d);
    const box = $('#domains');
    const seen = new Set();
    for (const dom of d.domains) {
      seen.add(dom.name);
      let st = domains.get(dom.name);
      if (!st) {
        st = createDomain(dom);
        domains.set(dom.name, st);
      }
      box.append(st.el); // keeps the document order of the answer
      const used = new Set();
      for (const c of dom.cubes) for (const h of c.hosts) if (h.group != null) used.add(h.group);
      let sig = JSON.stringify(dom);
      for (const g of used) sig += '|' + colors[g] + (d.groups[g].sliceShape || '');
      if (sig !== st.sig) {
        st.sig = sig;
        updateDomain(st, dom);
      }
    }
    for (const [name, st] of domains) {
      if (!seen.has(name)) {
        observer.unobserve(st.canvas);
        st.el.remove();
        dirty.delete(st);
        domains.delete(name);
      }
    }
    document.body.setAttribute('data-domains', String(d.domains.length));
    setTimeout(drain, 0);
  }

  // ---- hover and click -----------------------------------------------------------------
  function hit(st, e) {
    if (!st.dom) return null;
    const r = st.canvas.getBoundingClientRect();
    const px = e.clientX - r.left - PAD;
    const py = e.clientY - r.top - PAD;
    const col = Math.floor(px / st.cw);
    const row = Math.floor(py / st.ch);
    if (!st.cells) {
      st.cells = new Map();
      for (const cube of st.dom.cubes) {
        for (const h of cube.hosts) st.cells.set(cube.col + ',' + cube.row + ',' + h.x + ',' + h.y, h);
      }
    }
    const x = Math.floor((px - col * st.cw) / st.cell);
    const y = Math.floor((py - row * st.ch) / st.cell);
    return st.cells.get(col + ',' + row + ',' + x + ',' + y) || null;
  }

  function hover(st, e) {
    const h = hit(st, e);
    const tip = $('#tip');
    if (!h) {
      tip.hidden = true;
      return;
    }
    const g = h.group != null ? data.groups[h.group] : null;
    const root = g ? data.groups[g.root] : null;
    tip.textContent = h.name + (h.coords ? ' @' + h.coords : '') + ' · ' + h.state +
      (g ? ' · ' + groupName(root) + (root !== g ? ' / ' + g.name : '') : '') + (h.pods ? ' · ' + h.pods + ' pods' : '');
    tip.style.left = (e.clientX + 14) + 'px';
    tip.style.top = (e.clientY + 12) + 'px';
    tip.hidden = false;
  }

  // The longest task that blocked the page (Chrome's long-task entries, > 50 ms).
  let longest = 0;
  try {
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) longest = Math.max(longest, e.duration);
      document.body.setAttribute('data-longest-task-ms', longest.toFixed(1));
    }).observe({ type: 'longtask', buffered: true });
  } catch (e) {
    // no long-task timing in this browser
  }

  takeToken();
  poll();
})();
