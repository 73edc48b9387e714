/* epbench, the buyer's pages: the home page's ranked table at a target, and the compare page.
 *
 * Reads its configuration from <script type="application/json" id="epb-buyer-config"> and the
 * newest result per endpoint x workload x client region (data/view/latest.json and
 * latest_agentic.json, same origin). The reader picks a workload and a target: a per-user
 * speed to reach (tokens/s each user sees) or a ceiling on TTFT p90. Each endpoint is placed at
 * its best measured point meeting the target (highest system throughput), and the frontier it
 * draws is its result's own (`on_pareto`, computed once in Python). Every control is in the
 * address. Every element is built with createElement/textContent (lib/dom.js).
 */
import { el } from './lib/dom.js';
import { fmt, plural } from './lib/format.js';
import { fetchView, loadFailed } from './lib/data.js';
import { addressState, flag, paramNotes } from './lib/url_state.js';
import { controlForm, field, flagBox, select, syncControls } from './lib/controls.js';
import { addDefinition, numCell, scrollHint } from './lib/tables.js';
import { rankBadge, showSuitePool, suitePool, tierBadge, unrankedReasons, viewReasons } from './lib/provenance.js';
import { canDraw, chartConfig, embed as embedChart, onScheme, replaceRows, sized } from './lib/charts.js';

(function () {
  var configEl = document.getElementById('epb-buyer-config');
  var host = document.getElementById('epb-buyer');
  if (!configEl || !host) { return; }
  var config = JSON.parse(configEl.textContent);
  var compareMode = config.mode === 'compare';
  var CHART_SERIES = 5;  // the home chart draws the top five endpoints

  var points = [];
  var agentic = [];
  var state = {};
  var controls = {};     // parameter -> its control
  var pickBox = null;    // compare: the endpoints' checkboxes
  var entries = [];      // one per endpoint x client region, ranked
  var chosen = [];       // compare: the entries chosen, in the order asked
  var chart = { view: null, holder: null, ready: null };
  var pending = Promise.resolve();
  var renders = 0;

  // ---------------------------------------------------------------- state <-> URL
  function defaultValue(target) {
    return String(target === 'ttft' ? config.defaults.ttft : config.defaults.speed);
  }

  // The page's parameters and their defaults (the target value's follows the target).
  function defaults(s) {
    var d = { workload: config.defaults.workload, target: 'speed', value: defaultValue(s.target),
      unranked: '', self_reported: '' };
    if (compareMode) { d.endpoints = ''; }
    return d;
  }

  function knownEndpoints() {
    var seen = {};
    points.forEach(function (p) { seen[p.endpoint_id] = true; });
    return seen;
  }

  // The endpoints asked for that have a serving result, at most compare_limit of them.
  function endpointsCheck(v) {
    var known = knownEndpoints();
    var notes = [];
    var kept = [];
    v.split(',').filter(function (x) { return x !== ''; }).forEach(function (id) {
      if (!known[id]) {
        notes.push('endpoints: \u201c' + id + '\u201d has no serving result; left out.');
      } else if (kept.indexOf(id) < 0 && kept.length < config.compare_limit) {
        kept.push(id);
      } else if (kept.indexOf(id) < 0) {
        notes.push('endpoints: at most ' + config.compare_limit + ' at once; \u201c' + id + '\u201d left out.');
      }
    });
    return { value: kept.join(','), notes: notes };
  }

  var address = addressState({
    defaults: defaults,
    // The unranked control's flag was called emulated, though it takes in every unranked
    // result: addresses shared with the old name still open the same view.
    aliases: { emulated: 'unranked' },
    checks: {
      workload: function (w, s) {
        return config.workloads.indexOf(w) >= 0 ? { value: w }
          : { why: 'no serving result for this workload; showing ' + (s.workload || 'none') + '.' };
      },
      target: function (t) {
        return t === 'speed' || t === 'ttft' ? { value: t }
          : { why: 'the target is speed (per-user speed) or ttft (TTFT ceiling); using speed.' };
      },
      value: function (v, s) {
        var n = Number(v);
        return v.trim() !== '' && isFinite(n) && n > 0 ? { value: String(n) }
          : { why: 'not a positive number; using ' + s.value + '.' };
      },
      unranked: flag('unranked', 'unranked results'),
      self_reported: flag('self_reported', 'self-reported results'),
      endpoints: endpointsCheck
    }
  });

  // ---------------------------------------------------------------- ranking
  function targetValue() { return Number(state.value); }

  function meets(p) {
    var v = targetValue();
    if (state.target === 'ttft') { return p.ttft_ms_p90 != null && p.ttft_ms_p90 <= v; }
    return p.tps_per_user != null && p.tps_per_user >= v;
  }

  function targetText() {
    return state.target === 'ttft'
      ? 'TTFT p90 at most ' + fmt(targetValue(), 'ms') + ' ms'
      : 'every user at ' + fmt(targetValue(), 'tps') + ' tokens/s or faster';
  }

  // One entry per endpoint x client region of the chosen workload: its best point at the target.
  function rank() {
    var wanted = state.unranked === '1';
    var selfIncluded = state.self_reported === '1';
    var groups = new Map();
    points.forEach(function (p) {
      if (p.workload_id !== state.workload) { return; }
      if (viewReasons(p, selfIncluded).length && !wanted) { return; }
      var key = p.endpoint_id + '\u0000' + (p.client_region || '');
      var list = groups.get(key);
      if (!list) { list = []; groups.set(key, list); }
      list.push(p);
    });
    var regions = {};
    groups.forEach(function (list) { regions[list[0].endpoint_id] = (regions[list[0].endpoint_id] || 0) + 1; });
    var out = [];
    groups.forEach(function (list) {
      var first = list[0];
      var best = null;
      list.forEach(function (p) {
        if (!meets(p)) { return; }
        if (!best || p.system_tps > best.system_tps ||
            (p.system_tps === best.system_tps && (p.ttft_ms_p90 || 0) < (best.ttft_ms_p90 || 0))) {
          best = p;
        }
      });
      var closest = list.reduce(function (a, b) {
        if (state.target === 'ttft') { return (b.ttft_ms_p90 != null && (a.ttft_ms_p90 == null || b.ttft_ms_p90 < a.ttft_ms_p90)) ? b : a; }
        return (b.tps_per_user != null && (a.tps_per_user == null || b.tps_per_user > a.tps_per_user)) ? b : a;
      });
      var label = first.endpoint_id + (regions[first.endpoint_id] > 1 && first.client_region
        ? ' (from ' + first.client_region + ')' : '');
      out.push({ label: label, endpoint_id: first.endpoint_id, row: first, points: list, best: best,
        closest: closest, reasons: viewReasons(first, selfIncluded) });
    });
    out.sort(function (a, b) {
      if (!!a.best !== !!b.best) { return a.best ? -1 : 1; }
      if (a.best) { return b.best.system_tps - a.best.system_tps || (a.label < b.label ? -1 : 1); }
      var x = state.target === 'ttft' ? (a.closest.ttft_ms_p90 || Infinity) - (b.closest.ttft_ms_p90 || Infinity)
        : (b.closest.tps_per_user || 0) - (a.closest.tps_per_user || 0);
      return x || (a.label < b.label ? -1 : 1);
    });
    var n = 0;
    out.forEach(function (e) { e.rank = e.best && !e.reasons.length ? ++n : null; });
    return out;
  }

  // ---------------------------------------------------------------- controls
  function update(key, value) {
    state[key] = value;
    if (key === 'target') { state.value = defaultValue(value); }
    address.commit(state);
    syncControls(controls, state);
    render();
  }

  function buildControls() {
    var form = controlForm('epb-filters epb-target', 'Workload and target');
    controls.workload = select('workload', config.workloads.map(function (w) { return [w, w]; }),
      function (v) { update('workload', v); });
    form.appendChild(field('Workload', controls.workload, 'epb-b-workload'));

    controls.target = select('target', [['speed', 'Per-user speed at least (tokens/s)'],
      ['ttft', 'TTFT p90 at most (ms)']], function (v) { update('target', v); });
    form.appendChild(field('Target', controls.target, 'epb-b-target'));

    var value = el('input', { type: 'number', name: 'value', min: '0', step: 'any' });
    value.addEventListener('change', function () {
      var n = Number(value.value);
      if (value.value.trim() === '' || !isFinite(n) || n <= 0) {
        paramNotes(host, ['The target must be a positive number; kept ' + state.value + '.']);
        value.value = state.value;
        return;
      }
      paramNotes(host, []);
      update('value', String(n));
    });
    controls.value = value;
    form.appendChild(field('Target value', value, 'epb-b-value'));

    flagBox(form, controls, update, 'unranked', 'epb-b-unranked',
      'Include unranked results (emulated, quick, without evidence or breaking a rule)');
    flagBox(form, controls, update, 'self_reported', 'epb-b-self_reported',
      'Include self-reported results');
    host.appendChild(form);
    if (compareMode) {
      var pick = el('fieldset', { 'class': 'epb-pick', id: 'epb-pick' });
      pick.appendChild(el('legend', null, 'Endpoints to compare (two to ' + config.compare_limit + ')'));
      pickBox = pick;
      host.appendChild(pick);
    }
  }

  // ---------------------------------------------------------------- tables
  function badges(entry) {
    var row = entry.row;
    var span = el('span', { 'class': 'epb-badges' });
    span.appendChild(rankBadge(entry.reasons));
    span.appendChild(el('span', { 'class': 'epb-badge', title: 'Division: how the endpoint is offered and priced' },
      row.division));
    var tier = tierBadge(row);
    if (tier) { span.appendChild(tier); }
    if (row.source_format && row.source_format !== 'epbench') {
      span.appendChild(el('span', { 'class': 'epb-badge', title: 'Imported from another tool\u2019s output' },
        'imported: ' + row.source_format));
    }
    if (row.submitter_relationship) {
      span.appendChild(el('span', { 'class': 'epb-badge', title: 'Submitted by ' + (row.submitter || '?') +
        ', who is the endpoint\u2019s ' + row.submitter_relationship },
      row.submitter_relationship === 'provider' ? 'by the provider' : row.submitter_relationship));
    }
    if (row.quick) {
      span.appendChild(el('span', { 'class': 'epb-badge epb-badge-no', title: 'Run with --quick: shortened points' }, 'quick'));
    }
    return span;
  }

  function header(columns) {
    var tr = el('tr');
    columns.forEach(function (col) {
      var th = el('th', { scope: 'col', 'data-key': col.key });
      th.appendChild(el('span', { title: col.help || col.label }, col.label));
      addDefinition(th, col, config.methodology);
      if (col.kind === 'num') { th.className = 'epb-num'; }
      tr.appendChild(th);
    });
    var thead = el('thead');
    thead.appendChild(tr);
    return thead;
  }

  function runLink(row, text) {
    return el('a', { href: config.root + 'runs/' + encodeURIComponent(row.run_id) + '/' }, text);
  }

  function endpointCell(entry) {
    var td = el('td', { 'class': 'epb-endpoint' });
    td.appendChild(el('a', { href: config.root + 'endpoints/' + encodeURIComponent(entry.endpoint_id) + '/',
      title: 'The endpoint\u2019s page: identity, prices, every result' }, entry.label));
    // Provider and model each on one line: a narrow column breaks between them, never inside a name.
    var sub = el('span', { 'class': 'epb-muted epb-sub' });
    sub.appendChild(el('span', { 'class': 'epb-name' }, entry.row.provider + ' \u00b7'));
    sub.appendChild(document.createTextNode(' '));
    sub.appendChild(el('span', { 'class': 'epb-name' }, entry.row.model));
    td.appendChild(sub);
    return td;
  }

  function rankedRow(entry, columns) {
    var tr = el('tr', { 'data-endpoint': entry.endpoint_id, 'data-run': entry.row.run_id });
    var p = entry.best;
    columns.forEach(function (col) {
      if (col.key === 'rank') { tr.appendChild(numCell(entry.rank, 'int')); return; }
      if (col.key === 'endpoint_id') { tr.appendChild(endpointCell(entry)); return; }
      if (col.key === 'date') {
        var d = el('td', { 'class': 'epb-nowrap' });
        d.appendChild(runLink(entry.row, entry.row.date));
        tr.appendChild(d);
        return;
      }
      if (col.key === 'badges') { var td = el('td'); td.appendChild(badges(entry)); tr.appendChild(td); return; }
      if (col.key === 'compare') {
        var c = el('td');
        var box = el('input', { type: 'checkbox', 'class': 'epb-compare-box', 'aria-label': 'Compare ' + entry.label });
        box.value = entry.endpoint_id;
        box.addEventListener('change', compareLink);
        c.appendChild(box);
        tr.appendChild(c);
        return;
      }
      if (!p) {
        if (col.key === 'system_tps') {
          var miss = el('td', { 'class': 'epb-miss', colspan: '5' }, state.target === 'ttft'
            ? 'does not meet the target: lowest TTFT p90 ' + fmt(entry.closest.ttft_ms_p90, 'ms') + ' ms'
            : 'does not reach the target: fastest per-user speed ' + fmt(entry.closest.tps_per_user, 'tps') + ' tok/s');
          tr.appendChild(miss);
        }
        return;
      }
      tr.appendChild(numCell(p[col.key], col.format));
    });
    return tr;
  }

  var rankedTable = null;
  var rankedHint = null;
  window.addEventListener('resize', function () {
    if (rankedTable && rankedHint) { scrollHint(rankedTable, rankedTable.firstChild, rankedHint); }
  });
  var compareAnchor = null;

  function compareLink() {
    if (!compareAnchor) { return; }
    var ids = Array.prototype.map.call(host.querySelectorAll('.epb-compare-box:checked'), function (b) { return b.value; });
    var picked = [];
    (ids.length >= 2 ? ids : entries.filter(function (e) { return e.rank; }).map(function (e) { return e.endpoint_id; }))
      .forEach(function (id) { if (picked.indexOf(id) < 0 && picked.length < (ids.length >= 2 ? config.compare_limit : 3)) { picked.push(id); } });
    var params = new URLSearchParams(address.query(state).replace(/^[^?]*\??/, ''));
    if (picked.length) { params.set('endpoints', picked.join(',')); }
    compareAnchor.setAttribute('href', config.root + 'compare/?' + params.toString());
    // A comparison needs two: with fewer ranked (and none ticked) there is nothing to offer.
    compareAnchor.hidden = picked.length < 2;
    compareAnchor.textContent = ids.length >= 2 ? 'Compare the ' + picked.length + ' ticked endpoints'
      : 'Compare the top ' + picked.length + ' (or tick two to ' + config.compare_limit + ')';
  }

  function renderRanked() {
    var columns = config.columns.concat(compareMode ? [] : [{ key: 'compare', label: 'compare', kind: 'text' }]);
    var table = el('table', { 'class': 'epb-table epb-ranked', id: 'epb-ranked' });
    var list = compareMode ? chosen : entries;
    var ranked = list.filter(function (e) { return e.rank; }).length;
    table.appendChild(el('caption', null, (compareMode ? 'The chosen endpoints' : 'Endpoints') + ' on ' +
      state.workload + ' with ' + targetText() + ': ' + (ranked
        ? plural(ranked, 'ranked endpoint') + ', best throughput first (newest result of each; # is the rank among all endpoints).'
        : list.length ? 'none ranked; unranked results, best throughput first (newest result of each).'
          : state.unranked === '1' ? 'none yet.' : 'none ranked yet.')));
    table.appendChild(header(columns));
    var body = el('tbody');
    list.forEach(function (e) { body.appendChild(rankedRow(e, columns)); });
    if (!list.length) {
      var tr = el('tr');
      tr.appendChild(el('td', { colspan: String(columns.length), 'class': 'epb-empty' },
        compareMode && entries.length ? 'Pick two to ' + config.compare_limit + ' endpoints above to compare them.'
          : state.unranked === '1' ? 'No result for this workload yet.'
          : 'No rankable result for this workload yet. Tick \u201cInclude unranked results\u201d to see the unranked ones.'));
      body.appendChild(tr);
    }
    table.appendChild(body);
    var scroll = el('div', { 'class': 'epb-scroll' });
    scroll.appendChild(table);
    if (rankedTable) { rankedTable.parentNode.replaceChild(scroll, rankedTable); } else { host.appendChild(scroll); }
    rankedTable = scroll;
    // As on the boards: a line above the table names the columns a narrow screen scrolls to.
    if (!rankedHint) {
      rankedHint = el('p', { 'class': 'epb-scroll-hint', id: 'epb-ranked-hint', hidden: 'hidden' });
      scroll.parentNode.insertBefore(rankedHint, scroll);
    }
    scrollHint(scroll, table, rankedHint);
    if (!compareMode) {
      if (!compareAnchor) {
        compareAnchor = el('a', { 'class': 'md-button', id: 'epb-compare-link' }, '');
        scroll.parentNode.insertBefore(compareAnchor, scroll.nextSibling);
      }
      compareLink();
    }
  }

  // ---------------------------------------------------------------- compare
  // The entries to compare: per endpoint asked for, its best-placed entry (one client region).
  function pickChosen() {
    var ids = state.endpoints ? state.endpoints.split(',') : [];
    if (!ids.length) {  // the top three: ranked ones first, then those shown unranked
      entries.filter(function (e) { return e.rank; }).concat(entries.filter(function (e) { return !e.rank; }))
        .forEach(function (e) {
          if (ids.length < 3 && ids.indexOf(e.endpoint_id) < 0) { ids.push(e.endpoint_id); }
        });
    }
    var out = [];
    ids.forEach(function (id) {
      var first = entries.filter(function (e) { return e.endpoint_id === id; })[0];
      if (first && out.length < config.compare_limit) { out.push(first); }
    });
    return out;
  }

  function renderPick() {
    var pick = pickBox;
    Array.prototype.slice.call(pick.querySelectorAll('label')).forEach(function (n) { n.remove(); });
    var ids = chosen.map(function (e) { return e.endpoint_id; });
    var seen = {};
    entries.forEach(function (e) {
      if (seen[e.endpoint_id]) { return; }
      seen[e.endpoint_id] = true;
      var label = el('label', { 'class': 'epb-pick-item' });
      var box = el('input', { type: 'checkbox', name: 'endpoints' });
      box.value = e.endpoint_id;
      box.checked = ids.indexOf(e.endpoint_id) >= 0;
      box.addEventListener('change', function () {
        var now = Array.prototype.filter.call(pick.querySelectorAll('input'), function (b) { return b.checked; })
          .map(function (b) { return b.value; });
        if (now.length > config.compare_limit) {
          box.checked = false;
          paramNotes(host, ['At most ' + config.compare_limit + ' endpoints at once.']);
          return;
        }
        update('endpoints', now.join(','));
      });
      label.appendChild(box);
      label.appendChild(document.createTextNode(' ' + e.endpoint_id));
      pick.appendChild(label);
    });
  }

  function section(id, title) {
    var old = document.getElementById(id);
    var s = el('section', { id: id, 'class': 'epb-section' });
    s.appendChild(el('h2', null, title));
    if (old) { old.parentNode.replaceChild(s, old); } else { host.appendChild(s); }
    return s;
  }

  function pct(a, b) {
    if (a == null || b == null) { return '\u2014'; }
    if (a === b) { return 'same'; }
    if (b === 0) { return '\u2014'; }
    var d = (a - b) / Math.abs(b) * 100;
    return (d > 0 ? '+' : '') + fmt(d, 'num') + '%';
  }

  // Every agentic result of the endpoint, ranked or not (the table says which); emulated ones
  // only when asked for, as everywhere else.
  function agenticOf(entry) {
    return agentic.filter(function (a) { return a.endpoint_id === entry.endpoint_id &&
      (a.division !== 'emulated' || a.rankable || state.unranked === '1'); });
  }

  // The endpoint's newest agentic result on one workload (ties: the smaller run id), or null.
  function agenticOn(entry, workload) {
    var list = agenticOf(entry).filter(function (a) { return a.workload_id === workload; });
    return list.length ? list.reduce(function (a, b) {
      return (b.date > a.date || (b.date === a.date && b.run_id < a.run_id)) ? b : a;
    }) : null;
  }

  // The agentic workloads every chosen endpoint has a result on, sorted: a difference is only
  // ever taken within one workload.
  function commonWorkloads(list) {
    var common = null;
    list.forEach(function (e) {
      var mine = {};
      agenticOf(e).forEach(function (a) { mine[a.workload_id] = true; });
      common = common === null ? Object.keys(mine)
        : common.filter(function (w) { return mine[w]; });
    });
    return (common || []).sort();
  }

  function agenticDiff(list) {
    var rows = [];
    commonWorkloads(list).forEach(function (w) {
      rows.push(['agentic success rate on ' + w + ' (newest)', function (e) {
        var a = agenticOn(e, w); return a && a.success_rate; }, 'pct']);
      rows.push(['agentic cost per successful task on ' + w + ' ($)', function (e) {
        var a = agenticOn(e, w); return a && a.usd_per_successful_task; }, 'usd']);
    });
    return rows;
  }

  // A figure of the entry's point chosen at the target.
  function atBest(key) { return function (e) { return e.best && e.best[key]; }; }

  var DIFF = [
    ['system throughput at target (tok/s)', atBest('system_tps'), 'tps'],
    ['per-user speed there (tok/s)', atBest('tps_per_user'), 'tps'],
    ['$ per M output tokens there', atBest('usd_per_mtok_output'), 'usd'],
    ['TTFT p50 there (ms)', atBest('ttft_ms_p50'), 'ms'],
    ['TTFT p90 there (ms)', atBest('ttft_ms_p90'), 'ms'],
    ['TTFT p99 there (ms)', atBest('ttft_ms_p99'), 'ms'],
    ['TPOT p90 there (ms)', atBest('tpot_ms_p90'), 'ms'],
    ['error rate there', atBest('error_rate'), 'pct'],
    ['max system throughput, any point (tok/s)', function (e) {
      return e.points.reduce(function (m, p) { return Math.max(m, p.system_tps || 0); }, 0);
    }, 'tps']
  ];

  function renderDiff() {
    var s = section('epb-diff', 'Side by side, and the difference against ' + (chosen[0] ? chosen[0].label : 'the first'));
    if (chosen.length < 2) {
      s.appendChild(el('p', { 'class': 'epb-note' }, 'Pick at least two endpoints to compare.'));
      return;
    }
    var table = el('table', { 'class': 'epb-table epb-diff', id: 'epb-diff-table' });
    table.appendChild(el('caption', null, 'At ' + targetText() + ' on ' + state.workload +
      '; the difference is each endpoint against the first column.'));
    var thead = el('thead');
    var tr = el('tr');
    tr.appendChild(el('th', { scope: 'col' }, 'figure'));
    chosen.forEach(function (e, i) {
      tr.appendChild(el('th', { scope: 'col', 'class': 'epb-num' }, e.label));
      if (i > 0) { tr.appendChild(el('th', { scope: 'col', 'class': 'epb-num' }, 'vs ' + chosen[0].label)); }
    });
    thead.appendChild(tr);
    table.appendChild(thead);
    var body = el('tbody');
    var agenticRows = agenticDiff(chosen);
    DIFF.concat(agenticRows).forEach(function (d) {
      var row = el('tr');
      row.appendChild(el('th', { scope: 'row' }, d[0]));
      var base = d[1](chosen[0]);
      chosen.forEach(function (e, i) {
        var v = d[1](e);
        row.appendChild(numCell(v == null ? null : v, d[2]));
        if (i > 0) { row.appendChild(el('td', { 'class': 'epb-num' }, pct(v, base))); }
      });
      body.appendChild(row);
    });
    if (!agenticRows.length) {
      var none = el('tr', { 'class': 'epb-diff-none' });
      none.appendChild(el('th', { scope: 'row' }, 'agentic'));
      none.appendChild(el('td', { colspan: String(chosen.length * 2 - 1), 'class': 'epb-long' },
        'No agentic workload that every endpoint here has a result on, so no agentic difference: ' +
        'a difference is only taken within one workload (each endpoint\u2019s agentic results are listed below).'));
      body.appendChild(none);
    }
    table.appendChild(body);
    var scroll = el('div', { 'class': 'epb-scroll' });
    scroll.appendChild(table);
    s.appendChild(scroll);
  }

  function renderAgentic() {
    var s = section('epb-agentic', 'Agentic results of these endpoints');
    var rows = [];
    chosen.forEach(function (e) { agenticOf(e).forEach(function (a) { rows.push(a); }); });
    if (!rows.length) {
      s.appendChild(el('p', { 'class': 'epb-note' }, chosen.length ? 'No agentic result for these endpoints yet.'
        : 'Pick endpoints above to see their agentic results.'));
      return;
    }
    var cols = [['endpoint_id', 'endpoint', ''], ['workload_id', 'workload', ''], ['success_rate', 'success rate', 'pct'],
      ['ci', '95% interval', ''], ['pass_hat_1', 'pass^1', 'pct'], ['usd_per_successful_task', 'per successful task ($)', 'usd'],
      ['decision_ms_p90', 'decision p90 (ms)', 'ms'], ['date', 'date', ''], ['ranked', 'ranked', '']];
    var table = el('table', { 'class': 'epb-table', id: 'epb-agentic-table' });
    var tr = el('tr');
    cols.forEach(function (c) { tr.appendChild(el('th', { scope: 'col' }, c[1])); });
    var thead = el('thead'); thead.appendChild(tr); table.appendChild(thead);
    var body = el('tbody');
    rows.forEach(function (a) {
      var r = el('tr');
      cols.forEach(function (c) {
        if (c[0] === 'ranked') {
          var why = unrankedReasons(a);
          r.appendChild(el('td', { 'class': why.length ? 'epb-long' : '', title: why.join('; ') },
            why.length ? 'not ranked: ' + why.join('; ') : 'ranked'));
        } else if (c[0] === 'ci') {
          r.appendChild(el('td', { 'class': 'epb-num' }, fmt(a.success_ci_low, 'pct') + ' \u2013 ' + fmt(a.success_ci_high, 'pct')));
        } else if (c[2]) {
          r.appendChild(numCell(a[c[0]], c[2]));
        } else {
          r.appendChild(el('td', null, fmt(a[c[0]])));
        }
      });
      body.appendChild(r);
    });
    table.appendChild(body);
    var scroll = el('div', { 'class': 'epb-scroll' });
    scroll.appendChild(table);
    s.appendChild(scroll);
  }

  // ---------------------------------------------------------------- chart
  var chartBox, chartCaption, chartSummary, chartEmpty;

  function buildChart(parent) {
    var s = el('section', { 'class': 'epb-charts', id: 'epb-buyer-chart', 'aria-label': 'Chart' });
    s.appendChild(el('h2', { id: 'epb-chart-title', 'class': 'epb-chart-title' },
      compareMode ? 'Their frontiers: throughput against per-user speed'
        : 'The top endpoints\u2019 frontiers: throughput against per-user speed'));
    chartCaption = el('p', { 'class': 'epb-chart-caption', id: 'epb-chart-caption' });
    chartBox = el('div', { 'class': 'epb-chart', id: 'epb-chart', role: 'figure',
      'aria-labelledby': 'epb-chart-title', 'aria-describedby': 'epb-chart-caption epb-chart-summary' });
    chartEmpty = el('p', { 'class': 'epb-empty', id: 'epb-chart-empty', hidden: 'hidden' });
    chartSummary = el('p', { 'class': 'epb-chart-summary', id: 'epb-chart-summary', 'aria-live': 'polite' });
    [chartCaption, chartEmpty, chartBox, chartSummary].forEach(function (n) { s.appendChild(n); });
    parent.appendChild(s);
  }

  function chartRows(list) {
    var rows = [];
    list.forEach(function (e) {
      e.points.forEach(function (p) {
        if (p.tps_per_user == null || p.system_tps == null) { return; }
        rows.push({ kind: 'point', series: e.label, point: p.point, run_id: p.run_id,
          tps_per_user: p.tps_per_user, system_tps: p.system_tps, ttft_ms_p90: p.ttft_ms_p90,
          usd_per_mtok_output: p.usd_per_mtok_output, frontier: !!p.on_pareto,
          chosen: !!(e.best && e.best.point === p.point) });
      });
    });
    return rows;
  }

  function embed() {
    chart.holder = el('div', { 'class': 'epb-chart-view' });
    chartBox.textContent = '';
    chartBox.appendChild(chart.holder);
    var width = Math.max(280, Math.floor(chartBox.getBoundingClientRect().width) - 8);
    var look = chartConfig(config.chart.config, width);
    if (width < 640) {  // beside the table, or on a phone: fewer ticks on a narrow axis
      look.axisX = { tickCount: Math.max(4, Math.floor(width / 70)), labelOverlap: 'greedy', labelSeparation: 6 };
    }
    chart.ready = embedChart(chart.holder, sized(config.chart, width, look))
      .then(function (result) { chart.view = result.view; return chart; });
    return chart.ready;
  }

  function renderChart() {
    var list = compareMode ? chosen : entries.filter(function (e) { return e.best; }).slice(0, CHART_SERIES);
    var rows = chartRows(list);
    var marks = rows.length;
    if (state.target === 'speed' && rows.length) {
      rows.push({ kind: 'target', tps_per_user: targetValue(), label: targetText() });
    }
    chartCaption.hidden = !list.length;
    chartSummary.hidden = !list.length;
    var anyRanked = list.some(function (e) { return e.rank; });
    var kind = anyRanked ? 'highest-ranked endpoint' : 'fastest unranked endpoint';
    chartCaption.textContent = (compareMode
      ? (list.length === 1 ? 'The chosen endpoint\u2019s' : 'The chosen endpoints\u2019')
      : list.length === 1 ? 'The ' + kind + '\u2019s' : 'The ' + plural(list.length, kind) + '\u2019')
      + ' newest results on ' + state.workload + ': each measured point (faint when another point of the ' +
      'same result is both faster per user and higher in throughput), the frontier as a step, the point chosen at ' +
      'the target ringed' + (state.target === 'speed' ? ', the target as a dashed line.' : '.');
    chartSummary.textContent = plural(marks, 'point') + ' in ' + plural(list.length, 'series', 'series') + '.';
    chartEmpty.hidden = marks > 0;
    chartBox.hidden = marks === 0;
    chartEmpty.textContent = marks ? '' : compareMode && !chosen.length && entries.length
      ? 'Nothing to draw yet: pick two to ' + config.compare_limit + ' endpoints above.'
      : entries.length ? 'Nothing to draw: no endpoint meets this target on this workload.'
      : state.unranked === '1' ? 'Nothing to draw: no result on this workload yet.'
        : 'Nothing to draw: no ranked result on this workload yet.';
    if (!canDraw() || !marks) { return Promise.resolve(); }
    var ready = chart.view ? Promise.resolve(chart) : embed();
    return ready.then(function (c) { return replaceRows(c.view, 'rows', rows); });
  }

  // The home page's "Newest results" follow the controls: the newest rows of the chosen
  // workload they let in (the build marks each row with its workload and the control that
  // admits it: none when ranked).
  function renderNewest() {
    var note = document.getElementById('epb-newest-note');
    if (!note) { return; }
    var limit = Number(note.getAttribute('data-shown'));
    var shown = 0;
    Array.prototype.forEach.call(document.querySelectorAll('.epb-newest tbody tr'), function (tr) {
      var gate = tr.getAttribute('data-epb-gate');
      var admitted = (gate === '' || state.unranked === '1' ||
        (gate === 'self_reported' && state.self_reported === '1')) &&
        tr.getAttribute('data-epb-workload') === state.workload;
      tr.hidden = !(admitted && shown < limit);
      if (!tr.hidden) { shown += 1; }
    });
    note.hidden = false;
    note.textContent = (shown ? '' : 'No result on ' + state.workload + ' that the controls above let in. ') +
      (state.unranked === '1' ? 'Ranked and unranked results on ' + state.workload + ', as the controls above ask.'
        : state.self_reported === '1' ? 'Ranked and self-reported results on ' + state.workload + ', as the controls above ask; tick \u201cInclude unranked results\u201d to list the others too.'
        : 'Ranked results on ' + state.workload + ' only, as the table above; tick \u201cInclude unranked results\u201d to list the others too.');
  }

  // ---------------------------------------------------------------- render
  function render() {
    entries = rank();
    if (compareMode) {
      chosen = pickChosen();
      renderPick();
    }
    renderRanked();
    if (compareMode) { renderDiff(); renderAgentic(); } else {
      renderNewest();
      // home's unranked control takes in every unranked result, self-reported ones too
      showSuitePool(state.unranked === '1' ? 'all' : suitePool(state.self_reported === '1', false));
    }
    pending = renderChart().then(function () {
      host.setAttribute('data-renders', String(++renders));
    }, function (err) {
      host.setAttribute('data-chart-error', String(err && err.message || err));
    });
    return pending;
  }

  window.epbBuyer = {
    idle: function () { return pending; },
    state: function () { return Object.assign({}, state); },
    entries: function () { return entries.map(function (e) {
      return { endpoint_id: e.endpoint_id, label: e.label, rank: e.rank, point: e.best ? e.best.point : null,
        system_tps: e.best ? e.best.system_tps : null, usd_per_mtok_output: e.best ? e.best.usd_per_mtok_output : null };
    }); },
    chosen: function () { return chosen.map(function (e) { return e.endpoint_id; }); },
    chartData: function () { return chart.view ? chart.view.data('rows') : []; },
    view: function () { return chart.view; }
  };

  function start() {
    var read = address.read();
    state = read.state;
    buildControls();
    paramNotes(host, read.problems);
    syncControls(controls, state);
    if (compareMode) {
      buildChart(host);
    } else {
      // The answer: the ranked table with the chart of the top endpoints beside it (under it on
      // narrow screens, board.css).
      var answer = el('div', { 'class': 'epb-answer', id: 'epb-answer' });
      var left = el('div', { 'class': 'epb-answer-table' });
      rankedTable = el('div');
      left.appendChild(rankedTable);
      answer.appendChild(left);
      host.appendChild(answer);
      buildChart(answer);
    }
    window.addEventListener('popstate', function () {
      var again = address.read(); state = again.state; paramNotes(host, again.problems);
      syncControls(controls, state); render();
    });
    onScheme(function () { chart.view = null; render(); });
    return render();
  }

  window.epbBuyer.ready = Promise.all([fetchView(config.sources.latest), fetchView(config.sources.agentic)])
    .then(function (views) { points = views[0]; agentic = views[1]; return start(); })
    .catch(function (err) { loadFailed(host, err); });
})();
