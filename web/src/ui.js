// memtrack ui: the live process table of `memtrack top` in the browser, refreshed from the
// server (/api/processes), with the RSS history of the chosen process (uPlot), its threads on
// demand and, for a process under `memtrack run`, snapshots shown with the HTML report's
// views (page.js, fed the same report model); files named on the command line, heap
// profiles included (profile.js), in the same views. window.memtrackUi exposes the state for tests.
(function (V) {
  'use strict';
  const el = V.el;
  const root = document.getElementById('ui');

  // Columns: key, title, value of a process, text (sorts A to Z) or number (largest first).
  const COLUMNS = [
    {key: 'pid', title: 'PID', value: (p) => p.pid, text: true},
    {key: 'user', title: 'USER', value: (p) => p.user, text: true},
    {key: 'rss', title: 'RSS', value: (p) => p.rss_kb, kb: true},
    {key: 'pss', title: 'PSS', value: (p) => p.pss_kb, kb: true},
    {key: 'uss', title: 'USS', value: (p) => p.uss_kb, kb: true},
    {key: 'swap', title: 'SWAP', value: (p) => p.swap_kb, kb: true},
    {key: 'growth', title: 'GROWTH', value: (p) => p.growth_kb, kb: true},
    {key: 'rate', title: '/MIN', value: (p) => p.growth_kb_per_min},
    {key: 'threads', title: 'THR', value: (p) => p.num_threads},
    {key: 'recent', title: 'LAST MINUTE', value: (p) => p.growth_kb, chart: true},
    {key: 'command', title: 'COMMAND', value: (p) => p.command, text: true},
  ];

  const state = {
    processes: [], sort: 'rss', descending: true, filter: '', expanded: new Set(), chosen: null,
    refreshes: 0, seconds: 0, refreshSeconds: 1, snapshots: new Map(), chart: null, error: null,
  };
  window.memtrackUi = state;

  const kb = (v) => (v === null || v === undefined ? '-' : V.formatBytes(v * 1024));
  const cellText = (c, p) => {
    const v = c.value(p);
    if (c.kb) return c.key === 'growth' ? (v > 0 ? '+' : '') + kb(v) : kb(v);
    // Growth per minute, in the units of the other columns; '-' until watched 10 s.
    if (c.key === 'rate') return v === null || v === undefined ? '-' : (v > 0 ? '+' : '') + V.formatBytes(Math.round(v * 1024)) + '/min';
    return String(v);
  };

  async function api(path, options) {
    const response = await fetch(path, Object.assign({credentials: 'same-origin'}, options));
    const body = await response.json().catch(() => ({error: response.status + ' ' + response.statusText}));
    if (!response.ok) throw new Error(body.error || response.statusText);
    return body;
  }

  // --- layout -----------------------------------------------------------------------------
  const status = el('span', {class: 'status'});
  const filter = el('input', {type: 'search', placeholder: 'Filter: command, user or pid', 'aria-label': 'Filter'});
  const headRow = el('tr');
  const body = el('tbody');
  const table = el('table', {class: 'procs'}, el('thead', null, headRow), body);
  const files = el('div', {class: 'files'});
  const detail = el('section', {class: 'detail card', hidden: true});
  root.replaceChildren(
    el('header', null, el('h1', null, 'memtrack ui'), status, filter),
    el('main', null, files, el('div', {class: 'proc-scroll'}, table), detail));

  for (const c of COLUMNS) {
    headRow.appendChild(el('th', {class: c.text ? 'text' : '', dataset: {col: c.key}, title: 'Sort by ' + c.title,
                                  onclick: () => sortBy(c.key)}, c.title));
  }
  filter.addEventListener('input', () => { state.filter = filter.value.trim().toLowerCase(); render(); });

  function sortBy(key) {
    const c = COLUMNS.find((x) => x.key === key);
    if (state.sort === key) state.descending = !state.descending;
    else { state.sort = key; state.descending = !c.text; }
    render();
  }
  state.sortBy = sortBy;

  function selected(p) {
    const f = state.filter;
    if (!f) return true;
    return String(p.pid) === f || p.command.toLowerCase().includes(f) || p.name.toLowerCase().includes(f) ||
      p.user.toLowerCase().includes(f);
  }

  function ordered() {
    const c = COLUMNS.find((x) => x.key === state.sort);
    const sign = state.descending ? -1 : 1;
    const missing = state.descending ? -Infinity : Infinity;  // unknown values sort last
    return state.processes.filter(selected).sort((a, b) => {
      let x = c.value(a); let y = c.value(b);
      if (c.text) { x = String(x); y = String(y); } else { x = x ?? missing; y = y ?? missing; }
      const order = c.key === 'pid' ? a.pid - b.pid : (x < y ? -1 : x > y ? 1 : 0);
      return order * sign || a.pid - b.pid;
    });
  }

  // --- the table --------------------------------------------------------------------------
  function render() {
    for (const th of headRow.children) th.classList.toggle('sorted', th.dataset.col === state.sort);
    const rows = [];
    for (const p of ordered()) {
      const open = state.expanded.has(p.pid);
      const tr = el('tr', {class: 'process' + (state.chosen === p.pid ? ' chosen' : ''), dataset: {pid: p.pid},
                           onclick: () => choose(p.pid)});
      for (const c of COLUMNS) {
        const td = el('td', {class: (c.text ? 'text ' : '') + c.key + (c.key === 'growth' && p.growing ? ' grow' : ''),
                             dataset: {col: c.key}});
        if (c.chart) {
          td.appendChild(sparkline(p.rss_recent_kb || [], p.growing));
        } else if (c.key === 'command') {
          td.appendChild(el('button', {class: 'expand', title: 'Threads', 'aria-expanded': String(open),
            onclick: (e) => { e.stopPropagation(); toggleThreads(p.pid); }}, open ? '▾' : '▸'));
          if (p.memtrack) td.appendChild(el('span', {class: 'memtrack-mark', title: 'runs under memtrack run'}, 'memtrack'));
          td.appendChild(document.createTextNode(p.command));
          td.title = p.command;
        } else {
          td.textContent = cellText(c, p);
          if (c.kb && c.value(p) !== null) td.dataset.kb = c.value(p);
        }
        tr.appendChild(td);
      }
      rows.push(tr);
      if (open) {
        for (const t of p.threads || []) {
          rows.push(el('tr', {class: 'thread', dataset: {tid: t.tid}},
            el('td', {class: 'text'}, String(t.tid)), el('td', {class: 'text'}, t.state),
            el('td', {colspan: COLUMNS.length - 3}, t.cpu_seconds.toFixed(2) + ' s CPU'),
            el('td', {class: 'text command'}, '└ ' + t.name)));
        }
      }
    }
    body.replaceChildren(...rows);
    status.textContent = state.processes.length + ' processes · refreshed every ' + state.refreshSeconds + ' s' +
      (state.error ? ' · ' + state.error : '');
  }

  // RSS over the last minute as a small line (SVG): the rows' shape at a glance; the chosen
  // process's full history is the uPlot chart below the table.
  const SVG = 'http://www.w3.org/2000/svg';
  function sparkline(values, growing) {
    const svg = document.createElementNS(SVG, 'svg');
    svg.setAttribute('class', growing ? 'spark grow' : 'spark');
    svg.setAttribute('width', '90');
    svg.setAttribute('height', '18');
    if (values.length < 2) return svg;
    const min = Math.min(...values);
    const span = Math.max(...values) - min || 1;
    const points = values.map((v, i) => (i * 88 / (values.length - 1) + 1).toFixed(1) + ',' +
                                        (17 - (v - min) * 16 / span).toFixed(1));
    const line = document.createElementNS(SVG, 'polyline');
    line.setAttribute('points', points.join(' '));
    svg.appendChild(line);
    return svg;
  }

  function toggleThreads(pid) {
    if (state.expanded.has(pid)) state.expanded.delete(pid); else state.expanded.add(pid);
    refresh();
  }

  let inFlight = false;
  async function refresh() {
    if (inFlight) return;  // a slow answer is not overtaken by the next tick
    inFlight = true;
    try {
      const threads = Array.from(state.expanded).join(',');
      const doc = await api('/api/processes' + (threads ? '?threads=' + threads : ''));
      state.processes = doc.processes;
      state.seconds = doc.seconds;
      state.refreshSeconds = doc.refresh_seconds;
      state.error = null;
      state.refreshes++;
      render();
      if (state.chosen !== null) await drawChart();
      document.body.dataset.refreshes = String(state.refreshes);
    } catch (error) {
      state.error = 'server unreachable: ' + error.message;
      render();
    } finally {
      inFlight = false;
    }
  }

  // --- the chosen process -----------------------------------------------------------------
  const title = el('h2');
  const chartBox = el('div', {class: 'rss-chart'});
  const actions = el('div', {class: 'actions'});
  const reportPanel = el('div', {class: 'report-panel'});
  detail.append(title, chartBox, actions, reportPanel);

  function choose(pid) {
    state.chosen = pid;
    const p = state.processes.find((x) => x.pid === pid);
    if (!p) return;
    detail.hidden = false;
    title.textContent = 'Process ' + pid + ' (' + p.name + ')';
    if (state.chart) { state.chart.destroy(); state.chart = null; }
    actions.replaceChildren();
    reportPanel.replaceChildren();
    if (p.memtrack) {
      const button = el('button', {id: 'snapshot-now'}, 'Snapshot now');
      const note = el('span', {class: 'muted'}, 'asks the process for a full leak report, as memtrack snapshot ' + pid + ' does');
      button.addEventListener('click', () => takeSnapshot(pid, button, note));
      const liveButton = el('button', {id: 'live-reports'}, 'Live reports');
      liveButton.addEventListener('click', () => showLive(pid, note));
      // Recorded with memtrack run --profile: its heap profile so far, analysed by the server.
      const profileButton = p.profile ? el('button', {id: 'heap-profile'}, 'Heap profile') : null;
      if (profileButton) profileButton.addEventListener('click', () => showRunningProfile(pid, profileButton, note));
      actions.append(...[button, liveButton, profileButton, note, snapshotPicker(pid)].filter(Boolean));
    } else {
      actions.append(el('span', {class: 'muted'}, 'Not under memtrack run: memory only (start a program with ' +
                                                  'memtrack run to see its leaks here).'));
    }
    render();
    drawChart();
  }
  state.choose = choose;

  function snapshotPicker(pid) {
    const list = state.snapshots.get(pid) || [];
    if (!list.length) return null;
    const picker = el('select', {'aria-label': 'Snapshot'},
      list.map((s, i) => el('option', {value: i}, 'Snapshot ' + (i + 1) + ' at ' + s.time)));
    picker.value = String(list.length - 1);
    picker.addEventListener('change', () => showReport(list[Number(picker.value)].model));
    return picker;
  }

  async function takeSnapshot(pid, button, note) {
    button.disabled = true;
    note.textContent = 'waiting for the report…';
    try {
      const model = await api('/api/snapshot?pid=' + pid, {method: 'POST'});
      const list = state.snapshots.get(pid) || [];
      list.push({time: new Date().toLocaleTimeString(), model});
      state.snapshots.set(pid, list);
      note.textContent = 'snapshot ' + list.length + ' taken';
      const old = actions.querySelector('select');
      if (old) old.remove();
      actions.append(snapshotPicker(pid) || '');
      showReport(model);
    } catch (error) {
      note.textContent = 'snapshot failed: ' + error.message;
      note.className = 'error';
    } finally {
      button.disabled = false;
    }
  }

  // The live reports the process wrote so far (memtrack run --expire), as the HTML report's
  // live view draws them.
  async function showLive(pid, note) {
    try {
      const doc = await api('/api/live?pid=' + pid);
      if (!doc.live.length) {
        note.textContent = 'no live reports yet (they need memtrack run --expire=DURATION)';
        return;
      }
      const view = V.liveView(doc.live, {});
      reportPanel.replaceChildren(el('section', {id: 'live', class: 'card'},
        el('h2', null, 'Live reports: old bytes per site over time'), view.element));
      view.draw();
      note.textContent = doc.live.length + ' live reports';
      document.body.dataset.live = String(doc.live.length);
    } catch (error) {
      note.textContent = 'live reports: ' + error.message;
    }
  }

  // The heap profile the process has recorded up to now (each press reads what came since),
  // in the views of a profile opened from disk; a window chosen on its chart is analysed too.
  async function showRunningProfile(pid, button, note) {
    button.disabled = true;
    note.className = 'muted';
    note.textContent = 'analysing the heap profile so far…';
    const open = async (query) => {
      try {
        const model = await api('/api/profile?pid=' + pid + query);
        if (pid !== state.chosen) return;
        showReport(model, {loadWindow: (from, to) => open('&from_us=' + from + '&to_us=' + to)});
        note.textContent = 'heap profile up to its last event, ' + (model.profile.duration_us / 1e6).toFixed(1) +
          ' s after the start; press again for what came since';
      } catch (error) {
        note.textContent = 'heap profile: ' + error.message;
        note.className = 'error';
      }
    };
    await open('');
    button.disabled = false;
  }

  function showReport(model, options) {
    state.views = V.renderReport(reportPanel, model, options);
    document.body.dataset.report = String((Number(document.body.dataset.report) || 0) + 1);
  }
  state.showReport = showReport;

  async function drawChart() {
    const pid = state.chosen;
    const history = await api('/api/history?pid=' + pid);
    if (pid !== state.chosen) return;
    const data = [history.seconds, history.rss_kb.map((v) => v * 1024)];
    if (state.chart) { state.chart.setData(data); return; }
    const style = getComputedStyle(document.documentElement);
    const c = (name) => style.getPropertyValue(name).trim();
    const axis = {stroke: c('--fg'), grid: {stroke: c('--grid')}, ticks: {stroke: c('--grid')}};
    state.chart = new uPlot({
      title: 'RSS over time (last 5 min every second, then 2 h at 10 s maxima)',
      width: Math.max(chartBox.clientWidth, 320), height: 190, scales: {x: {time: false}}, legend: {show: false},
      axes: [Object.assign({values: (u, v) => v.map((s) => s + ' s')}, axis),
             Object.assign({size: 80, values: (u, v) => v.map((b) => V.formatBytes(b))}, axis)],
      series: [{label: 'seconds'}, {label: 'RSS', stroke: c('--accent'), width: 2,
                                    value: (u, v) => (v === null ? '' : V.formatBytes(v))}],
    }, data, chartBox);
  }

  // --- reports named on the command line --------------------------------------------------
  async function loadFiles() {
    const doc = await api('/api/files');
    if (!doc.files.length) return;
    files.replaceChildren(el('span', {class: 'muted'}, 'Reports: '),
      ...doc.files.map((name, i) => el('button', {class: 'open-file', dataset: {index: i}, onclick: async () => {
        state.chosen = null;
        if (state.chart) { state.chart.destroy(); state.chart = null; }
        detail.hidden = false;
        title.textContent = name;
        chartBox.replaceChildren();
        actions.replaceChildren();
        // A heap profile's window chosen on its chart is analysed here, by the server.
        const open = async (query) => {
          try {
            showReport(await api('/api/file?index=' + i + query),
                       {loadWindow: (from, to) => open('&from_us=' + from + '&to_us=' + to)});
          } catch (error) {
            actions.replaceChildren(el('span', {class: 'error'}, name + ': ' + error.message));
          }
        };
        await open('');
        render();
      }}, V.basename(name))));
  }

  refresh().then(() => { document.body.dataset.ready = 'true'; });
  loadFiles().catch((error) => { files.textContent = 'Reports: ' + error.message; });
  setInterval(refresh, 1000);
})(window.MemtrackViews);
