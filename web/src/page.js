// The whole report as one page: a header, the summary of every process, then for the process
// chosen (all processes and on-demand checks of the report) its leak table, flame graph,
// retained-size tree, errors, descriptors and live charts. V.renderReport(root, model) fills
// `root` and returns the views it made, for scripts and tests: {summary, leaks, flame, live,
// retention, select(i)}. A heap profile's model (it has "profile" where a leak report's has
// "report") gets the views of profile.js instead.
(function (V) {
  'use strict';
  const el = V.el;

  function section(id, title, ...content) {
    return el('section', {id, class: 'card'}, el('h2', null, title), content);
  }

  // The process to show first: the first with leaked bytes, else with errors, else the first.
  function firstInteresting(processes) {
    const score = (p) => (p.summary.leaked_bytes ? 2 : 0) + (p.errors.length || (p.resources || []).length ? 1 : 0);
    let best = 0;
    processes.forEach((p, i) => { if (score(p) > score(processes[best])) best = i; });
    return best;
  }

  V.renderReport = function (root, model, options) {
    if (model.profile) return V.renderProfile(root, model, options);  // a heap profile's page
    const report = model.report;
    const sources = model.sources || {};
    const live = model.live || [];
    const processes = report.processes.concat(report.checks || []);
    const views = {summary: null, leaks: null, flame: null, live: null, processes};

    const nav = el('nav', null, ['summary', 'leaks', 'flame', 'retained', 'errors', 'descriptors', 'live'].map((id) =>
      el('a', {href: '#' + id, id: 'nav-' + id}, {summary: 'Summary', leaks: 'Leaks', flame: 'Flame graph',
        retained: 'Retained', errors: 'Errors', descriptors: 'Descriptors', live: 'Live'}[id])));
    const picker = el('select', {'aria-label': 'Process'},
      processes.map((p, i) => el('option', {value: i}, V.processLabel(p))));
    const detail = el('div', {class: 'process-detail'});
    root.replaceChildren(
      el('header', null, el('h1', null, 'memtrack report'),
         el('span', {class: 'muted'}, 'memtrack ' + report.memtrack.version), nav),
      el('main', null,
        section('summary', 'Summary', views.summary = V.summaryView(report)),
        processes.length > 1 ? el('div', {class: 'picker'}, el('label', null, 'Process: ', picker)) : null,
        detail));

    views.select = function (i) {
      const p = processes[i];
      picker.value = String(i);
      const mine = live.filter((r) => r.pid === p.pid);
      views.leaks = V.leakTableView(p, sources);
      views.flame = V.flameGraphView(p);
      views.live = mine.length ? V.liveView(mine, sources) : null;
      views.retention = V.retentionView(p, sources);
      const block = V.blockRetentionView(p.block_retention, sources);
      const s = p.summary;
      detail.replaceChildren(...[
        section('leaks', 'Leaks of ' + V.processLabel(p),
          el('p', {class: 'totals'}, V.formatBytes(s.leaked_bytes) + ' leaked in ' + V.plural(s.leaked_blocks, 'block') +
             ' (' + V.formatCount(s.definite_bytes) + ' bytes definitely, ' + V.formatCount(s.indirect_bytes) +
             ' indirectly, ' + V.formatCount(s.possible_bytes) + ' possibly lost); ' +
             V.formatBytes(s.reachable_bytes) + ' still reachable.'),
          views.leaks.element),
        section('flame', 'Leaked bytes by allocation stack', views.flame.element),
        block ? section('block', 'What holds ' + p.block_retention.address, block) : null,
        views.retention ? section('retained', 'Retained memory: what keeps the still-reachable blocks alive',
                                  views.retention) : null,
        p.crash ? section('crash', 'Crashed: ' + p.crash.name + (p.crash.cause ? ' (' + p.crash.cause + ')' : '') +
                          (p.crash.address ? ' at ' + p.crash.address : '') + ' in thread ' + p.crash.thread,
                          V.stackView(p.crash.stack, sources)) : null,
        section('errors', 'Allocator misuse errors (' + p.errors.length + ')', V.errorsView(p, sources)),
        section('descriptors', 'Descriptors left open (' + (p.resources ? p.resources.length : 0) + ')',
                V.resourcesView(p, sources)),
        views.live ? section('live', 'Live reports: old bytes per site over time', views.live.element) : null,
      ].filter(Boolean));
      root.querySelector('#nav-live').hidden = !views.live;
      root.querySelector('#nav-retained').hidden = !views.retention;
      if (views.live) views.live.draw();
      // The flame graph of a large report takes a moment: the table is usable before it.
      const flame = views.flame;
      setTimeout(() => flame.draw(), 0);
    };
    picker.addEventListener('change', () => views.select(Number(picker.value)));
    if (processes.length) views.select(firstInteresting(processes));
    return views;
  };
})(window.MemtrackViews);
