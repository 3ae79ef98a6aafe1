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
// the page (a long-task entry, over 50 ms), if any.  Each root gang gets a
// hue of a fixed palette, its preferred one from its name unless a gang in
// the same or a neighbouring cube already has it; sub-groups are shades of
// it.  A host some pods use only partly is filled from the bottom by the
// share of its scarcest resource; a tainted host has an orange corner; a
// TPU slice is outlined as one box; each cube carries its name.
//
// Above the domains: an overview tile per domain with its utilisation; a
// search (host, pod or gang: hosts and gangs from the document, pods from
// ?pod=) and filters (pending gangs, cordoned or tainted hosts) dim every
// other host and hide domains with nothing to show.
'use strict';
(function () {
  const API = '/ui/api/placement';
  const POLL_MS = 2000;
  const SLICE_MS = 12;
  const CUBE_GAP = 10;
  const PAD = 5;
  const LABEL_H = 12; // a cube's name above it
  // twelve hues, consecutive ones far apart (a gang that cannot have its own takes the next)
  const PALETTE = [0, 200, 95, 285, 30, 175, 315, 55, 225, 140, 340, 260];
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
  let match = null; // host names the search and filters select, or null: all
  let dataTime = null;
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

  // 401 with a token sent: podkerneld rejected it (say so, not just ask again).
  function showLogin(status, sent) {
    clearTimeout(pollTimer);
    const why = $('#login-why');
    const err = $('#login-error');
    why.textContent = 'This podkerneld requires a bearer token (its --token-auth-file).';
    err.textContent = status === 403
      ? 'This token may not read the placement map (403 Forbidden). Try another one.'
      : sent ? 'podkerneld rejected this token (401 Unauthorized): it is not one of its ' +
        '--token-auth-file, or has expired. Check it and try again.' : '';
    err.hidden = !err.textContent;
    document.body.setAttribute('data-auth', status === 403 ? 'forbidden' : sent ? 'rejected' : 'needed');
    if (sent) {
      sessionStorage.removeItem(TOKEN_KEY);
      token = null;
    }
    $('#login').hidden = false;
    $('main').hidden = true;
    setStatus(sent ? 'token rejected' : 'token needed', true);
    $('#token').focus();
  }

  $('#login').addEventListener('submit', (e) => {
    e.preventDefault();
    token = $('#token').value.trim();
    sessionStorage.setItem(TOKEN_KEY, token);
    $('#login-error').hidden = true;
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
      showLogin(r.status, !!token);
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

  // The time of the data (its last change, from podkerneld) and of the last answer.
  function clock(iso) {
    const t = iso ? new Date(iso) : new Date();
    return isNaN(t) ? iso : t.toLocaleTimeString();
  }

  async function poll() {
    clearTimeout(pollTimer);
    try {
      const d = await fetchJSON(API + (gen ? '?since=' + gen : ''));
      if (!d.unchanged) {
        dataTime = d.time || null;
        render(d);
      }
      if (openNode) {
        showDetail(openNode);
        openNode = null;
      }
      gen = d.generation;
      setStatus((dataTime ? 'data of ' + clock(dataTime) + ' · ' : '') + 'checked ' + clock());
      $('#status').title = 'generation ' + gen;
      if (dataTime) document.body.setAttribute('data-time', dataTime);
    } catch (e) {
      if (e.auth) return;
      setStatus('cannot reach podkerneld: ' + e.message + (dataTime ? ' · showing data of ' + clock(dataTime) : ''), true);
    }
    pollTimer = setTimeout(poll, POLL_MS);
  }

  // ---- colours --------------------------------------------------------------------
  function hash(s) {
    let h = 2166136261;
    for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
    return h >>> 0;
  }

  // Root gangs that share a cube or sit in neighbouring cubes of one domain.
  function neighbours(d) {
    const near = new Map();
    const link = (a, b) => {
      if (a === b) return;
      if (!near.has(a)) near.set(a, new Set());
      if (!near.has(b)) near.set(b, new Set());
      near.get(a).add(b);
      near.get(b).add(a);
    };
    for (const dom of d.domains) {
      const at = new Map(); // "col,row" -> roots in that cube
      for (const c of dom.cubes) {
        const roots = new Set();
        for (const h of c.hosts) if (h.group != null) roots.add(d.groups[h.group].root);
        at.set(c.col + ',' + c.row, roots);
      }
      for (const c of dom.cubes) {
        const mine = at.get(c.col + ',' + c.row);
        for (let dx = -1; dx <= 1; dx++) {
          for (let dy = -1; dy <= 1; dy++) {
            const other = at.get((c.col + dx) + ',' + (c.row + dy));
            if (!other) continue;
            for (const a of mine) for (const b of other) link(a, b);
          }
        }
      }
    }
    return near;
  }

  // A palette hue per root gang (those holding hosts first): its preferred
  // one (from its name) unless another gang has it, else one no gang has,
  // else one no neighbour has; past the palette, the same hues darker.
  function assignColors(d) {
    const near = neighbours(d);
    const slot = new Map();
    const used = new Map(); // slot -> gangs
    const SLOTS = 4 * PALETTE.length;
    const roots = d.groups.filter((g) => g.root === g.id).sort((a, b) =>
      (b.hosts > 0) - (a.hosts > 0) || (groupName(a) < groupName(b) ? -1 : groupName(a) > groupName(b) ? 1 : 0));
    for (const r of roots) {
      const taken = new Set();
      for (const n of near.get(r.id) || []) if (slot.has(n)) taken.add(slot.get(n));
      const want = hash(groupName(r)) % PALETTE.length;
      let k = -1;
      for (let i = 0; i < PALETTE.length && k < 0; i++) {
        const c = (want + i) % PALETTE.length;
        if (!used.has(c)) k = c;
      }
      for (let i = 0; i < SLOTS && (k < 0 || taken.has(k)); i++) k = (want + i) % SLOTS;
      slot.set(r.id, k);
      used.set(k, (used.get(k) || 0) + 1);
    }
    return d.groups.map((g) => {
      const k = slot.get(g.root) || 0;
      const hue = PALETTE[k % PALETTE.length];
      const base = 48 - 9 * Math.floor(k / PALETTE.length);
      const light = g.id === g.root ? base : base - 12 + (hash(g.name) % 5) * 6;
      return 'hsl(' + hue + ' 64% ' + light + '%)';
    });
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
    // the headline: accelerators allocated (the mean host fill where hosts have none)
    const head = s.accelerators
      ? ['accelerators allocated', s.acceleratorsAllocated + ' of ' + s.accelerators + ' (' + pct(s.acceleratorShare) + ')']
      : ['used', pct(s.utilisation)];
    const items = [head, ['hosts', s.hosts], ['busy', s.busy], ['free', s.free],
      ['cordoned', s.cordoned], ['tainted', s.tainted || 0], ['unreachable', s.unreachable],
      ['pods bound', s.boundPods + '/' + s.pods], ['pending gangs', s.pendingGangs]];
    for (const [k, v] of items) box.append(el('span', { 'data-k': k }, el('b', { text: String(v) }), ' ' + k));
  }

  function pct(x) {
    return Math.round((x || 0) * 100) + '%';
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

  // Queued Jobs and JobSets not admitted yet: their place in their ClusterQueue
  // and what they wait for (quota of a resource in a flavor, or placement).
  function renderQueued(d) {
    const ul = $('#queued'), q = d.queued || [];
    ul.replaceChildren();
    $('#queued-count').textContent = '(' + q.length + ')';
    if (!q.length) ul.append(el('li', { class: 'muted', text: 'none' }));
    for (const w of q) {
      const name = w.namespace + '/' + w.name;
      const waits = w.wait === 'quota' && w.resource
        ? 'quota: ' + w.more + ' more ' + w.resource + ' in flavor ' + w.flavor + ' of ClusterQueue ' + w.clusterQueue
        : w.wait;
      ul.append(el('li', { 'data-queued': name, 'data-wait': w.wait },
        el('div', null, w.position != null ? el('b', { text: '#' + w.position + ' ' }) : null,
          el('b', { text: name }), ' ',
          el('span', { class: 'muted', text: w.kind + ' · queue ' + w.localQueue })),
        el('div', { class: 'reason', text: 'waits on ' + waits }),
        w.reason ? el('div', { class: 'msg', text: w.reason }) : null));
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
      ul.append(el('li', { 'data-group': groupName(r), 'data-color': colors[r.id] }, swatch(colors[r.id]),
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
      // requested against allocatable, for what the pods request
      const use = el('table', { class: 'use' });
      for (const k of Object.keys(n.requested || {}).sort()) {
        const a = (n.allocatable || {})[k];
        use.append(el('tr', { 'data-resource': k }, el('td', { text: k }),
          el('td', { text: qty(n.requested[k]) + ' of ' + (a != null ? qty(a) : '?') +
            (a ? ' (' + pct(n.requested[k] / a) + ')' : '') })));
      }
      const taints = el('ul', { class: 'taints' });
      for (const t of n.taints || []) taints.append(el('li', { text: t }));
      box.setAttribute('data-node', n.name);
      box.setAttribute('data-pods', String(n.pods.length));
      box.setAttribute('data-taints', String((n.taints || []).length));
      // replaceChildren() would print a null as the text "null": absent parts are left out
      box.replaceChildren(...[el('div', null, el('b', { text: n.name }), ' ', el('span', { class: 'muted', text: n.state })),
        (n.taints || []).length ? el('div', { class: 'muted', text: 'taints' }) : null,
        (n.taints || []).length ? taints : null, labels,
        use.childNodes.length ? el('div', { class: 'muted', text: 'requested of allocatable' }) : null,
        use.childNodes.length ? use : null, el('div', { class: 'muted', text: 'pods' }), pods].filter((c) => c != null));
    } catch (e) {
      if (!e.auth) box.textContent = name + ': ' + e.message;
    }
  }

  // milli-units as a person reads them
  function qty(m) {
    const v = m / 1000;
    if (v >= 1 << 30 && v % (1 << 30) === 0) return v / (1 << 30) + 'Gi';
    return Number.isInteger(v) ? String(v) : m + 'm';
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
    const ch = dom.cubeSize.rows * cell + CUBE_GAP + LABEL_H;
    st.dom = dom;
    st.cell = cell;
    st.cw = cw;
    st.ch = ch;
    st.width = dom.grid.cols * cw - CUBE_GAP + 2 * PAD;
    st.height = dom.grid.rows * ch - CUBE_GAP + 2 * PAD;
    st.canvas.setAttribute('data-origin', PAD + ',' + (PAD + LABEL_H)); // the first cube's first cell
    st.cells = null;
    const c = dom.counts;
    st.title.replaceChildren(dom.name, el('small', { text: c.hosts + (c.hosts === 1 ? ' host · ' : ' hosts · ') + c.busy + ' busy · ' + c.free + ' free' +
      (c.cordoned ? ' · ' + c.cordoned + ' cordoned' : '') + (c.unreachable ? ' · ' + c.unreachable + ' unreachable' : '') }));
    st.canvas.setAttribute('aria-label', dom.name + ': ' + c.busy + ' busy, ' + c.free + ' free of ' + c.hosts + ' hosts');
    // fallback content: one item per cube with the counts this page draws
    st.list.replaceChildren();
    for (const cube of dom.cubes) {
      const n = { busy: 0, free: 0, cordoned: 0, unreachable: 0 };
      let tainted = 0;
      let used = 0;
      for (const h of cube.hosts) {
        n[h.state]++;
        if (h.taints) tainted++;
        used += h.fill || 0;
      }
      st.list.append(el('li', { 'data-cube': cube.name, 'data-hosts': cube.hosts.length, 'data-busy': n.busy,
        'data-free': n.free, 'data-cordoned': n.cordoned, 'data-unreachable': n.unreachable,
        'data-tainted': tainted, 'data-used': used.toFixed(2),
        text: cube.name + ': ' + n.busy + ' busy, ' + n.free + ' free' + (tainted ? ', ' + tainted + ' tainted' : '') }));
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
    if (cv.width !== Math.round(st.width * dpr) || cv.height !== Math.round(st.height * dpr)) {
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
    ctx.font = '10px system-ui, sans-serif';
    ctx.textBaseline = 'bottom';
    for (const cube of dom.cubes) {
      const ox = PAD + cube.col * st.cw;
      const oy = PAD + LABEL_H + cube.row * st.ch;
      ctx.fillStyle = '#eef1f4';
      ctx.fillRect(ox - 3, oy - 3, cube.cols * s + 4, cube.rows * s + 4);
      ctx.strokeStyle = '#c3cbd4';
      ctx.lineWidth = 1;
      ctx.strokeRect(ox - 3.5, oy - 3.5, cube.cols * s + 5, cube.rows * s + 5);
      // the cube's name above it, narrowed to its width when longer
      ctx.fillStyle = '#56606b';
      ctx.fillText(cube.name, ox - 3, oy - 4, st.cw - CUBE_GAP / 2);
      for (const h of cube.hosts) {
        drawHost(ctx, h, ox + h.x * s, oy + h.y * s, s, inner);
        hosts++;
      }
    }
    outlineSlices(ctx, st);
    st.el.setAttribute('data-drawn', '1');
    return hosts;
  }

  // One host: its gang's colour filled to its share of the scarcest
  // resource, marks for cordon, taints and unreachability; dimmed when the
  // search or a filter leaves it out, ringed when they select it.
  function drawHost(ctx, h, x, y, s, inner) {
    const out = match && !match.has(h.name);
    if (out) ctx.globalAlpha = 0.16;
    ctx.fillStyle = '#dfe4e9';
    ctx.fillRect(x, y, inner, inner);
    if (h.pods) {
      const fill = h.fill == null ? 1 : Math.max(0.12, h.fill);
      const hgt = fill >= 0.995 ? inner : Math.max(1, Math.round(inner * fill));
      ctx.fillStyle = h.group != null ? colors[h.group] : '#5b6673';
      ctx.fillRect(x, y + inner - hgt, inner, hgt);
    }
    if (h.state === 'cordoned') hatch(ctx, x, y, inner);
    if (h.taints) {
      // a dark corner with a light edge: visible on every gang colour
      const t = Math.max(4, Math.round(inner * 0.55));
      ctx.fillStyle = '#111';
      ctx.strokeStyle = '#fff';
      ctx.lineWidth = 1;
      ctx.beginPath();
      ctx.moveTo(x + inner - t, y);
      ctx.lineTo(x + inner, y);
      ctx.lineTo(x + inner, y + t);
      ctx.closePath();
      ctx.fill();
      ctx.stroke();
    }
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
    if (out) ctx.globalAlpha = 1;
    if (match && !out) {
      ctx.strokeStyle = '#1d4ed8';
      ctx.lineWidth = 2;
      ctx.strokeRect(x - 1, y - 1, inner + 2, inner + 2);
    }
  }

  // TPU slices: one box around each slice's hosts (its bounding rectangle on
  // the canvas, across cube gaps); a slice whose hosts do not fill their box
  // (it wraps around the torus seam) gets the outline of its cells instead.
  function outlineSlices(ctx, st) {
    const s = st.cell;
    const sliced = new Map();
    for (const cube of st.dom.cubes) {
      for (const h of cube.hosts) {
        const g = h.group != null ? data.groups[h.group] : null;
        if (!g || !g.sliceShape) continue;
        if (!sliced.has(g.id)) sliced.set(g.id, []);
        sliced.get(g.id).push([cube.col, cube.row, h.x, h.y]);
      }
    }
    const drawn = [];
    ctx.strokeStyle = '#111';
    ctx.lineWidth = 2;
    for (const [id, cells] of sliced) {
      const px = (c) => PAD + c[0] * st.cw + c[2] * s;
      const py = (c) => PAD + LABEL_H + c[1] * st.ch + c[3] * s;
      let x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
      const cols = new Set(), rows = new Set();
      for (const c of cells) {
        x0 = Math.min(x0, px(c));
        y0 = Math.min(y0, py(c));
        x1 = Math.max(x1, px(c) + s);
        y1 = Math.max(y1, py(c) + s);
        cols.add(c[0] + ',' + c[2]);
        rows.add(c[1] + ',' + c[3]);
      }
      const g = data.groups[id];
      if (cols.size * rows.size <= cells.length) {
        ctx.strokeRect(x0 - 2, y0 - 2, x1 - x0 + 2, y1 - y0 + 2);
        drawn.push(groupName(g) + ':box');
      } else {
        outlineCells(ctx, st, cells);
        drawn.push(groupName(g) + ':cells');
      }
    }
    st.el.setAttribute('data-slices', drawn.join(' '));
  }

  function outlineCells(ctx, st, list) {
    const s = st.cell;
    const cells = new Set(list.map((c) => c.join(',')));
    ctx.beginPath();
    for (const [cc, cr, x, y] of list) {
      const px = PAD + cc * st.cw + x * s - 1;
      const py = PAD + LABEL_H + cr * st.ch + y * s - 1;
      const has = (dx, dy) => cells.has(cc + ',' + cr + ',' + (x + dx) + ',' + (y + dy));
      if (!has(-1, 0)) { ctx.moveTo(px, py); ctx.lineTo(px, py + s); }
      if (!has(1, 0)) { ctx.moveTo(px + s, py); ctx.lineTo(px + s, py + s); }
      if (!has(0, -1)) { ctx.moveTo(px, py); ctx.lineTo(px + s, py); }
      if (!has(0, 1)) { ctx.moveTo(px, py + s); ctx.lineTo(px + s, py + s); }
    }
    ctx.stroke();
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
    colors = assignColors(d);
    renderSummary(d);
    renderPending(d);
    renderQueued(d);
    renderFree(d);
    renderLegend(d);
    renderOverview(d);
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
    applySelection(false);
    setTimeout(drain, 0);
  }

  // ---- overview -------------------------------------------------------------------------
  // One tile per domain: its share in use (hosts weighted by their fill) and
  // its busy hosts; a click scrolls to the domain.
  function renderOverview(d) {
    const box = $('#overview');
    box.replaceChildren();
    for (const dom of d.domains) {
      const c = dom.counts;
      const u = (c.accelerators ? c.acceleratorShare : c.utilisation) || 0;
      const bar = el('i', { class: 'bar' });
      bar.style.width = (u * 100).toFixed(1) + '%';
      bar.style.background = 'hsl(' + (140 - 140 * u).toFixed(0) + ' 55% 45%)';
      const tile = el('button', { type: 'button', class: 'tile', 'data-domain': dom.name, 'data-util': String(u),
        title: dom.name + ': ' + (c.accelerators ? c.acceleratorsAllocated + ' of ' + c.accelerators + ' accelerators allocated, '
          : pct(u) + ' used, ') + c.busy + ' of ' + c.hosts + ' hosts busy' },
      el('b', { text: dom.name }), el('span', { class: 'track' }, bar),
      el('small', { text: pct(u) + ' · ' + c.busy + '/' + c.hosts + (c.tainted || c.cordoned || c.unreachable
        ? ' · ' + ((c.tainted || 0) + c.cordoned + c.unreachable) + ' marked' : '') }),
      el('small', { class: 'hits' }));
      tile.addEventListener('click', () => {
        const st = domains.get(dom.name);
        if (st) st.el.scrollIntoView({ block: 'start' });
      });
      box.append(tile);
    }
  }

  // ---- search and filters -----------------------------------------------------------------
  // The hosts to show: those the search names (by host, by gang, by pod via
  // ?pod=) and those the filters pick; null when neither is in use.
  let podHits = null; // host names holding pods the search names, once ?pod= answered
  let searchSeq = 0;

  function selected() {
    const text = $('#search').value.trim().toLowerCase();
    const pending = $('#f-pending').checked;
    const marked = $('#f-marked').checked;
    if (!data || (!text && !pending && !marked)) return null;
    const pendingRoots = new Set(data.pending);
    const gangs = new Set();
    if (text) {
      for (const g of data.groups) if (groupName(g).toLowerCase().includes(text)) gangs.add(g.id);
    }
    const out = new Set();
    const why = { host: 0, gang: 0, pod: 0, filter: 0 };
    for (const dom of data.domains) {
      for (const c of dom.cubes) {
        for (const h of c.hosts) {
          const g = h.group != null ? data.groups[h.group] : null;
          let hit = !text;
          if (text) {
            if (h.name.toLowerCase().includes(text)) { hit = true; why.host++; }
            else if (g && (gangs.has(g.id) || gangs.has(g.root))) { hit = true; why.gang++; }
            else if (podHits && podHits.has(h.name)) { hit = true; why.pod++; }
          }
          if (hit && (pending || marked)) {
            hit = (pending && g && pendingRoots.has(g.root)) ||
              (marked && (h.state === 'cordoned' || h.state === 'unreachable' || !!h.taints));
            if (hit) why.filter++;
          }
          if (hit) out.add(h.name);
        }
      }
    }
    out.why = why;
    out.gangs = gangs;
    return out;
  }

  // Redraw with the current selection; hide domains with nothing selected.
  function applySelection(redraw) {
    match = selected();
    const active = match != null;
    document.body.toggleAttribute('data-filtered', active);
    for (const [name, st] of domains) {
      let n = 0;
      if (active) for (const c of st.dom.cubes) for (const h of c.hosts) if (match.has(h.name)) n++;
      st.el.hidden = active && n === 0;
      st.el.setAttribute('data-matches', String(active ? n : ''));
      const tile = document.querySelector('#overview .tile[data-domain="' + CSS.escape(name) + '"]');
      if (tile) {
        tile.classList.toggle('none', active && n === 0);
        tile.querySelector('.hits').textContent = active ? n + ' selected' : '';
      }
      if (redraw) dirty.add(st);
    }
    renderMatches();
    if (redraw) setTimeout(drain, 0);
  }

  function renderMatches() {
    const box = $('#matches');
    const list = $('#results');
    list.replaceChildren();
    if (!match) {
      box.textContent = '';
      box.removeAttribute('data-count');
      return;
    }
    const w = match.why;
    const parts = [];
    if (w.host) parts.push(w.host + ' by host name');
    if (w.gang) parts.push(w.gang + ' of ' + match.gangs.size + ' matching gang' + (match.gangs.size === 1 ? '' : 's'));
    if (w.pod) parts.push(w.pod + ' holding matching pods');
    let text = match.size + ' host' + (match.size === 1 ? '' : 's') + (parts.length ? ': ' + parts.join(', ') : '');
    if ($('#f-pending').checked && data.pending.length) {
      const waiting = data.pending.filter((id) => !data.groups.some((g) => g.root === id && g.hosts > 0)).length;
      if (waiting) text += ' · ' + waiting + ' pending gang' + (waiting === 1 ? ' holds' : 's hold') + ' no host yet (listed under Pending gangs)';
    }
    if ($('#search').value.trim() && podHits === null) text += ' · searching pods…';
    box.textContent = text;
    box.setAttribute('data-count', String(match.size));
    let k = 0;
    for (const name of match) {
      if (++k > 20) {
        list.append(el('li', { class: 'muted', text: (match.size - 20) + ' more' }));
        break;
      }
      const li = el('li', { 'data-host': name }, el('a', { href: '#node=' + encodeURIComponent(name), text: name }));
      li.addEventListener('click', (e) => {
        e.preventDefault();
        showDetail(name);
      });
      list.append(li);
    }
  }

  function onSearch() {
    const text = $('#search').value.trim();
    const seq = ++searchSeq;
    podHits = null;
    applySelection(true);
    if (!text) return;
    fetchJSON(API + '?pod=' + encodeURIComponent(text)).then((r) => {
      if (seq !== searchSeq) return;
      podHits = new Set(r.items.filter((p) => p.node).map((p) => p.node));
      applySelection(true);
    }).catch(() => {
      if (seq !== searchSeq) return;
      podHits = new Set();
      applySelection(true);
    });
  }

  let searchTimer = null;
  $('#search').addEventListener('input', () => {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(onSearch, 250);
  });
  $('#search-form').addEventListener('submit', (e) => {
    e.preventDefault();
    clearTimeout(searchTimer);
    onSearch();
  });
  for (const f of ['#f-pending', '#f-marked']) $(f).addEventListener('change', () => applySelection(true));

  // ---- hover and click -----------------------------------------------------------------
  function hit(st, e) {
    if (!st.dom) return null;
    const r = st.canvas.getBoundingClientRect();
    const px = e.clientX - r.left - PAD;
    const py = e.clientY - r.top - PAD - LABEL_H;
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
      (g ? ' · ' + groupName(root) + (root !== g ? ' / ' + g.name : '') : '') + (h.pods ? ' · ' + h.pods + ' pods' : '') +
      (h.fill != null && h.pods ? ' · ' + pct(h.fill) + (h.scarce ? ' of ' + h.scarce : ' used') : '') +
      (h.taints ? ' · ' + h.taints.join(', ') : '');
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
