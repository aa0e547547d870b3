// memtrack's report views. Each view takes the report model or a part of it and returns DOM
// elements; the HTML report (report.js) and any other page feed them the same data:
//
//   model = {
//     report:  the JSON report, exactly as `memtrack report --json` writes it
//              (docs/json-schema.md),
//     live:    the live reports of the run, each as one line of --live-json (may be empty),
//     sources: {"path": {"LINE": "text"}}, source lines around program frames (may be empty)
//   }
//
// Text from the report (function names with < > &, paths, commands) is only ever set with
// textContent or as attribute values through the DOM, never parsed as HTML.
(function (global) {
  'use strict';

  const V = {};

  // --- small helpers ----------------------------------------------------------------------

  // el('td', {class: 'num', title: 'x'}, child, 'text', ...): children may be nodes,
  // strings (set as text), arrays of them, or null (skipped).
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    if (attrs) {
      for (const [name, value] of Object.entries(attrs)) {
        if (value === undefined || value === null || value === false) continue;
        if (name === 'class') node.className = value;
        else if (name.startsWith('on')) node.addEventListener(name.slice(2), value);
        else if (name === 'dataset') Object.assign(node.dataset, value);
        else node.setAttribute(name, value === true ? '' : String(value));
      }
    }
    appendChildren(node, children);
    return node;
  }
  function appendChildren(node, children) {
    for (const child of children) {
      if (child === null || child === undefined || child === false) continue;
      if (Array.isArray(child)) appendChildren(node, child);
      else if (child instanceof Node) node.appendChild(child);
      else node.appendChild(document.createTextNode(String(child)));
    }
  }
  V.el = el;

  const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  V.formatBytes = function (n) {
    let value = Number(n);
    let unit = 0;
    while (Math.abs(value) >= 1024 && unit < UNITS.length - 1) {
      value /= 1024;
      unit++;
    }
    return unit === 0 ? value + ' B' : value.toFixed(value < 10 ? 2 : 1) + ' ' + UNITS[unit];
  };
  V.formatCount = (n) => Number(n).toLocaleString('en-US');
  V.plural = (n, word) => V.formatCount(n) + ' ' + word + (Number(n) === 1 ? '' : 's');

  V.KIND_ORDER = {definite: 0, indirect: 1, possible: 2, unclassified: 3, reachable: 4};
  V.KIND_TITLE = {
    definite: 'definitely lost',
    indirect: 'indirectly lost',
    possible: 'possibly lost',
    reachable: 'still reachable',
    unclassified: 'not freed',
  };

  const basename = (path) => (path ? path.slice(path.lastIndexOf('/') + 1) : '');
  V.basename = basename;
  const isMain = (fn) => fn === 'main' || fn.startsWith('main.');

  // As the text report (printed_frame_count): frame #0 down to the first main, or all.
  V.printedCount = function (stack) {
    for (let i = 0; i < stack.length; i++) if (isMain(stack[i].function)) return i + 1;
    return stack.length;
  };
  V.frameName = (f) => f.function || '?? (' + (basename(f.module) || '?') + ')';
  V.frameLocation = function (f) {
    if (f.file) return f.file + (f.line ? ':' + f.line : '');
    return f.module ? basename(f.module) + '+' + f.module_offset : '';
  };
  // The first frame of the program's own code: the leak table names a group by it.
  V.leafFrame = (stack) => stack.find((f) => f.file) || stack[0] || null;

  V.processLabel = function (p) {
    const command = p.command && p.command.length ? p.command.join(' ') : '?';
    return (p.occasion ? p.occasion + ': ' : '') + command + ' [' + p.pid + ']';
  };

  V.exitText = function (exit) {
    if (!exit) return '';
    if (exit.running) return 'running';
    if (exit.unknown) return 'exit status unknown';
    if (exit.signal !== undefined) return 'killed by signal ' + exit.signal;
    return (exit.how === '_exit' ? 'called _exit(' + exit.code + ')' : 'exited with status ' + exit.code);
  };

  // --- stacks and source lines ------------------------------------------------------------

  // Source lines from..to around `line` that the model has, the frame's own line marked.
  V.snippetView = function (lines, line) {
    if (!lines) return null;
    const rows = [];
    for (let n = line - 3; n <= line + 3; n++) {
      const text = lines[String(n)];
      if (text === undefined) continue;
      rows.push(el('div', {class: n === line ? 'src-line here' : 'src-line'},
                   el('span', {class: 'src-no'}, String(n)), el('span', {class: 'src-text'}, text)));
    }
    return rows.length ? el('div', {class: 'snippet'}, rows) : null;
  };

  // The frames of a stack, innermost first; frames below main folded away.
  V.stackView = function (stack, sources) {
    if (!stack || !stack.length) return el('p', {class: 'muted'}, 'no stack recorded');
    const printed = V.printedCount(stack);
    const list = el('ol', {class: 'stack', start: 0});
    const frameItem = (f, i) => el('li', {class: i >= printed ? 'frame below-main' : 'frame'},
      el('div', {class: 'frame-head'},
        el('span', {class: 'frame-no'}, '#' + i),
        el('span', {class: 'fn'}, V.frameName(f)),
        f.inlined ? el('span', {class: 'badge inlined'}, 'inlined') : null,
        el('span', {class: 'loc'}, V.frameLocation(f)),
        f.file ? el('span', {class: 'module'}, basename(f.module)) : null),
      f.file && f.line && sources ? V.snippetView(sources[f.file], f.line) : null);
    stack.slice(0, printed).forEach((f, i) => list.appendChild(frameItem(f, i)));
    const wrap = el('div', {class: 'stack-view'}, list);
    if (printed < stack.length) {
      const more = el('button', {class: 'link'}, (stack.length - printed) + ' frames below main');
      more.addEventListener('click', () => {
        stack.slice(printed).forEach((f, i) => list.appendChild(frameItem(f, printed + i)));
        more.remove();
      });
      wrap.appendChild(more);
    }
    return wrap;
  };

  // --- summary ------------------------------------------------------------------------------

  V.summaryView = function (report) {
    const all = report.processes.concat(report.checks || []);
    const table = el('table', {class: 'summary grid'},
      el('thead', null, el('tr', null, ['Process', 'Exit', 'Definitely lost', 'Indirectly lost',
        'Possibly lost', 'Still reachable', 'Suppressed', 'Errors', 'Descriptors open', 'Notes']
        .map((h) => el('th', null, h)))));
    const body = el('tbody');
    for (const p of all) {
      const s = p.summary;
      const amount = (bytes, blocks, cls) => el('td', {class: 'num' + (bytes ? ' ' + cls : '')},
        V.formatBytes(bytes), el('span', {class: 'muted'}, ' in ' + V.formatCount(blocks)));
      const notes = [];
      if (p.no_data) notes.push('no leak data (' + p.no_data + ')');
      if (p.crash) notes.push('crashed: ' + p.crash.name + (p.crash.cause ? ', ' + p.crash.cause : ''));
      if (s.untracked_allocations) {
        notes.push(V.formatCount(s.untracked_allocations) + ' allocations (' +
                   V.formatBytes(s.untracked_bytes) + ') not tracked');
      }
      if (s.untracked_descriptors) notes.push(s.untracked_descriptors + ' descriptors not tracked');
      if (s.attached_ms) {
        notes.push('attached ' + (s.attached_ms / 1000).toFixed(1) +
                   ' s ago (memtrack attach): the blocks allocated before are not tracked' +
                   (s.preexisting_bytes ? ' (' + V.formatBytes(s.preexisting_bytes) + ' in use then)' : ''));
      }
      for (const note of p.notes) notes.push(note);
      body.appendChild(el('tr', null,
        el('td', null, el('div', {class: 'cmd'}, V.processLabel(p))),
        el('td', null, V.exitText(p.exit)),
        amount(s.definite_bytes, s.definite_blocks, 'bad'),
        amount(s.indirect_bytes, s.indirect_blocks, 'bad'),
        amount(s.possible_bytes, s.possible_blocks, 'warn'),
        amount(s.reachable_bytes, s.reachable_blocks, ''),
        amount(s.suppressed_bytes, s.suppressed_blocks, ''),
        el('td', {class: 'num' + (s.errors ? ' bad' : '')}, V.formatCount(s.errors) +
           (s.error_occurrences > s.errors ? ' (' + s.error_occurrences + ' times)' : '')),
        el('td', {class: 'num' + (s.open_descriptors ? ' warn' : '')},
           p.resources ? V.formatCount(s.open_descriptors) : 'not tracked'),
        el('td', {class: 'notes'}, notes.length ? el('ul', null, notes.map((n) => el('li', null, n))) : '')));
    }
    table.appendChild(body);
    return el('div', {class: 'table-wrap'}, table);
  };

  // --- allocator misuse errors and descriptors ------------------------------------------------

  V.errorsView = function (process, sources) {
    if (!process.errors.length) return el('p', {class: 'muted'}, 'No allocator misuse or heap memory errors.');
    // Heap memory errors (--check-heap): the stack is the access's, or the free's that found
    // the bytes overwritten; found at exit, it is the allocation's, and for a write after free
    // the block's free: each shown once below.
    const heap = (e) => ['invalid_read', 'invalid_write', 'write_outside_block', 'write_after_free'].includes(e.kind);
    const ownStack = (e) => e.kind !== 'write_after_free' && e.found_at !== 'exit';
    const badTitle = (e) => e.kind === 'write_outside_block' ? 'found at the free' :
      heap(e) ? 'accessed at' : e.free_call + ' called at';
    return el('div', {class: 'errors'}, process.errors.map((e) => el('details', {class: 'error', open: true},
      el('summary', null, el('span', {class: 'badge bad'}, e.kind.replace(/_/g, ' ')), ' ', e.description,
         e.occurrences > 1 ? el('span', {class: 'muted'}, ' (' + e.occurrences + ' times)') : null),
      ownStack(e) ? [el('h4', null, badTitle(e)), V.stackView(e.stack, sources)] : null,
      e.alloc_stack.length ? [el('h4', null, heap(e) ? 'allocated at' : 'allocated (' + e.alloc_call + ') at'),
                              V.stackView(e.alloc_stack, sources)] : null,
      e.free_stack.length ? [el('h4', null, heap(e) ? 'freed at' : 'first freed at'),
                             V.stackView(e.free_stack, sources)] : null)));
  };

  V.resourcesView = function (process, sources) {
    if (!process.resources) return el('p', {class: 'muted'}, 'Descriptors were not tracked (--track-fds=no).');
    if (!process.resources.length) return el('p', {class: 'muted'}, 'No descriptor was left open.');
    const body = el('tbody');
    for (const r of process.resources) {
      const row = el('tr', {class: 'expandable'},
        el('td', {class: 'num'}, String(r.fd)), el('td', null, r.kind), el('td', {class: 'path'}, r.path),
        el('td', null, r.flags), el('td', null, r.call + (r.stream ? ' (FILE*)' : '')),
        el('td', {class: 'fn'}, r.stack.length ? V.frameName(r.stack[0]) : ''),
        el('td', {class: 'loc'}, r.stack.length ? V.frameLocation(r.stack[0]) : ''));
      let detail = null;
      row.addEventListener('click', () => {
        if (detail) { detail.remove(); detail = null; row.classList.remove('open'); return; }
        detail = el('tr', {class: 'detail'}, el('td', {colspan: 7}, V.stackView(r.stack, sources)));
        row.after(detail);
        row.classList.add('open');
      });
      body.appendChild(row);
    }
    return el('div', {class: 'table-wrap'}, el('table', {class: 'grid resources'},
      el('thead', null, el('tr', null, ['fd', 'Kind', 'Refers to', 'Flags', 'Opened by', 'Function', 'Location']
        .map((h) => el('th', null, h)))), body));
  };

  global.MemtrackViews = V;
})(window);
