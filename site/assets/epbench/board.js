/* epbench leaderboard board: filters, sorting, search, URL state, downloads and charts.
 *
 * Reads its configuration from <script type="application/json" id="epb-board-config">, fetches
 * the view tables (data/view/<name>.json, same origin), and builds every element with
 * createElement and textContent: no string from the data is ever parsed as HTML.
 * Charts are vega-embed views over one named dataset, updated with a Vega changeset.
 */
import { el, onResize } from './lib/dom.js';
import { fmt, grouped, plural } from './lib/format.js';
import { fetchView, loadFailed } from './lib/data.js';
import { addressState, flag, paramNotes } from './lib/url_state.js';
import { controlForm, field, flagBox, select, syncControls as showState } from './lib/controls.js';
import { addDefinition, scrollHint } from './lib/tables.js';
import { toCsv, download } from './lib/downloads.js';
import { rankBadge, showSuitePool, suitePool, tierBadge, viewReasons } from './lib/provenance.js';
import { REDUCERS, frontierOf, indexByRun, indexedFrontier } from './lib/reducers.js';
import { canDraw, embed as embedChart, onScheme, replaceRows, sized } from './lib/charts.js';

(function () {

  var FILTERS = [
    { param: 'provider', column: 'provider', label: 'Provider' },
    { param: 'model', column: 'model', label: 'Model' },
    { param: 'endpoint', column: 'endpoint_id', label: 'Endpoint' },
    { param: 'division', column: 'division', label: 'Division' },
    { param: 'hardware', column: 'hardware', label: 'Hardware' },
    { param: 'region', column: 'region', label: 'Endpoint region' },
    { param: 'client_region', column: 'client_region', label: 'Client region' },
    { param: 'workload', column: 'workload_id', label: 'Workload' },
    { param: 'api', column: 'api', label: 'API' }  // shown once the tables carry an api column
  ];
  var OTHER_PARAMS = ['from', 'to', 'min_disclosure', 'emulated', 'self_reported', 'q', 'sort', 'dir', 'chart',
    'metric'];
  var SEARCH_COLUMNS = ['run_id', 'endpoint_id', 'provider', 'model', 'workload_id',
    'submitter', 'hardware', 'region', 'client_region', 'division'];
  var PAGE_SIZE = 50;
  var LONG_TEXT = 24;  // characters: longer text may wrap in its cell
  var ENDPOINT_SLUG = /^[a-z0-9][a-z0-9._-]{0,63}$/;  // endpoint ids that have a page (generator/entity_pages.py SLUG)
  var ALT_ROWS_LIMIT = 500;

  var configEl = document.getElementById('epb-board-config');
  var host = document.getElementById('epb-board');
  if (!configEl || !host) { return; }
  var config = JSON.parse(configEl.textContent);

  var tables = {};          // name -> array of row objects
  var mainRows = [];        // rows of the main table (after the page's fixed `where`)
  var filtered = [];        // rows passing the filters, sorted
  var shown = PAGE_SIZE;    // how many filtered rows the table renders
  var state = {};
  var controls = {};        // param -> element
  var charts = {};          // chart id -> {cfg, view, el, alt, summary}
  var pending = Promise.resolve();

  // ---------------------------------------------------------------- data
  function load() {
    var names = Object.keys(config.sources);
    return Promise.all(names.map(function (name) {
      return fetchView(config.sources[name]).then(function (rows) { tables[name] = rows; });
    }));
  }

  // History boards: every result of an endpoint x workload series is fetched only once a filter
  // (or the endpoint's own page) narrows to its endpoint; until then the source holds one row
  // per series, client region and day (`results` counts what it stands for). Loaded rows replace
  // that series' daily rows (generator/history_views.py).
  var seriesLoaded = {};

  function seriesWanted() {
    var sc = config.series;
    if (!sc) { return []; }
    var ep = (config.table.where || {}).endpoint_id || state.endpoint;
    var byWorkload = ep ? sc.files[ep] : null;
    if (!byWorkload) { return []; }
    return Object.keys(byWorkload).filter(function (w) {
      return (!state.workload || w === state.workload) && !seriesLoaded[byWorkload[w]];
    }).map(function (w) { return { key: ep + '\u0000' + w, url: byWorkload[w] }; });
  }

  function loadSeries(wanted) {
    return Promise.all(wanted.map(function (s) {
      return fetchView(s.url);
    })).then(function (lists) {
      var name = config.series.source;
      var drop = new Set(wanted.map(function (s) { return s.key; }));
      var rows = tables[name].filter(function (r) {
        return r._single || !drop.has(r.endpoint_id + '\u0000' + r.workload_id);
      });
      // A loaded row is one result: its "results" count is 1 (the daily rows count theirs).
      lists.forEach(function (list) {
        list.forEach(function (r) { r._single = true; if (r.results == null) { r.results = 1; } });
        Array.prototype.push.apply(rows, list);
      });
      wanted.forEach(function (s) { seriesLoaded[s.url] = true; });
      tables[name] = rows;
      sourceIndex = {};
      sortedCache = { key: null, rows: null };
      prepareMain();
    });
  }

  // Render, after fetching the series the state now needs (if any).
  function renderWithSeries() {
    var wanted = seriesWanted();
    if (!wanted.length) { return render(); }
    pending = loadSeries(wanted).then(render, function (err) {
      host.setAttribute('data-series-error', String(err && err.message || err));
      return render();
    });
    return pending;
  }

  function prepareMain() {
    var where = config.table.where || {};
    mainRows = tables[config.table.source].filter(function (row) {
      return Object.keys(where).every(function (key) { return row[key] === where[key]; });
    });
    mainRows.forEach(function (row) {
      row._search = SEARCH_COLUMNS.map(function (c) { return row[c] == null ? '' : String(row[c]); })
        .join('\u0001').toLowerCase();
    });
  }

  // ---------------------------------------------------------------- state <-> URL
  function defaults() {
    var s = {};
    FILTERS.forEach(function (f) { s[f.param] = ''; });
    s.from = ''; s.to = ''; s.min_disclosure = ''; s.emulated = ''; s.self_reported = ''; s.q = '';
    s.sort = config.table.sort[0]; s.dir = config.table.sort[1];
    s.chart = config.charts.length ? config.charts[0].id : '';
    s.metric = config.metrics && config.metrics.length ? config.metrics[0].key : '';
    return s;
  }

  var DATE = /^\d{4}-\d{2}-\d{2}$/;

  function date(v) { return v === '' || DATE.test(v) ? { value: v } : { why: 'not a date (YYYY-MM-DD); ignored.' }; }

  function oneOf(list, key, why) {
    return function (v) { return list.some(function (x) { return x[key] === v; }) ? { value: v } : { why: why }; };
  }

  // A filter's value is kept even when no row has it (the table then says nothing matches).
  function filterCheck(f) {
    return function (v) {
      return { value: v, notes: v !== '' && distinct(f.column).indexOf(v) < 0
        ? [f.param + '=' + v + ': no result on this page has this value, so no row matches.'] : [] };
    };
  }

  var checks = {
    from: date,
    to: date,
    min_disclosure: function (v) {
      return v === '' || (isFinite(Number(v)) && Number(v) >= 0 && Number(v) <= 1) ? { value: v }
        : { why: 'the disclosure score is a number from 0 to 1; ignored.' };
    },
    dir: function (v) { return v === 'asc' || v === 'desc' ? { value: v } : { why: 'the direction is asc or desc; ignored.' }; },
    sort: oneOf(config.table.columns, 'key', 'no such column on this page; ignored.'),
    chart: oneOf(config.charts, 'id', 'no such chart on this page; ignored.'),
    metric: oneOf(config.metrics || [], 'key', 'no such metric on this page; ignored.'),
    emulated: flag('emulated', 'emulated results'),
    self_reported: flag('self_reported', 'self-reported results')
  };
  FILTERS.forEach(function (f) { checks[f.param] = filterCheck(f); });
  var address = addressState({ defaults: defaults, checks: checks });

  // The state the address asks for; each part that cannot be applied is dropped and noted.
  function readUrl() {
    var read = address.read();
    paramNotes(host, read.problems);
    return read.state;
  }

  // ---------------------------------------------------------------- filtering and sorting
  function passes(row, s, ignore) {
    if (row.division === 'emulated' && s.emulated !== '1' && s.division !== 'emulated') {
      return false;
    }
    if (hiddenSelfReported(row, s)) { return false; }
    for (var i = 0; i < FILTERS.length; i++) {
      var f = FILTERS[i];
      if (f.param === ignore) { continue; }
      var want = s[f.param];
      if (want !== '' && String(row[f.column]) !== want) { return false; }
    }
    if (s.from && (!row.date || row.date < s.from)) { return false; }
    if (s.to && (!row.date || row.date > s.to)) { return false; }
    if (s.min_disclosure !== '') {
      var min = Number(s.min_disclosure);
      if (!(row.disclosure_score >= min)) { return false; }
    }
    if (s.q && row._search.indexOf(s.q.toLowerCase()) < 0) { return false; }
    return true;
  }

  // Self-reported results (no verified attestation) stay out of the board until the reader
  // includes them; emulated ones follow their own control (they are never ranked anyway).
  function hiddenSelfReported(row, s) {
    return row.tier === 'self-reported' && s.self_reported !== '1' && row.division !== 'emulated';
  }

  function compare(key, dir) {
    var sign = dir === 'asc' ? 1 : -1;
    return function (a, b) {
      var x = a[key], y = b[key];
      var xn = x === null || x === undefined, yn = y === null || y === undefined;
      if (xn || yn) { return xn && yn ? 0 : (xn ? 1 : -1); }  // missing values last
      if (typeof x === 'number' && typeof y === 'number') { return sign * (x - y); }
      x = String(x); y = String(y);
      return x < y ? -sign : (x > y ? sign : 0);
    };
  }

  // mainRows sorted by the current sort, kept until the sort changes: the sort is stable, so
  // filtering the sorted rows gives the order that sorting the filtered rows would.
  var sortedCache = { key: null, rows: null };

  function sortedMain() {
    var key = state.sort + '\u0000' + state.dir;
    if (sortedCache.key !== key) {
      sortedCache = { key: key, rows: mainRows.slice().sort(compare(state.sort, state.dir)) };
    }
    return sortedCache.rows;
  }

  // ---------------------------------------------------------------- controls
  function distinct(column) {
    var seen = {};
    mainRows.forEach(function (row) {
      var v = row[column];
      if (v !== null && v !== undefined && v !== '') { seen[String(v)] = true; }
    });
    return Object.keys(seen).sort();
  }

  // A page narrowed to one endpoint or workload shows no filter that has one choice there
  // (its provider, its model, its endpoint): such a select would offer nothing.
  var narrowed = Object.keys(config.table.where || {}).some(function (k) { return k !== 'workload_kind'; });

  function buildControls(form) {
    FILTERS.forEach(function (f) {
      if (!mainRows.length || !(f.column in mainRows[0])) { return; }
      var values = distinct(f.column);
      if (narrowed && values.length < 2 && !state[f.param]) { return; }
      var box = select(f.param, [['', 'All']].concat(values.map(function (v) { return [v, v]; })),
        function (v) { update(f.param, v); });
      controls[f.param] = box;
      form.appendChild(field(f.label, box, 'epb-f-' + f.param));
    });
    [['from', 'Date from'], ['to', 'Date to']].forEach(function (pair) {
      var input = el('input', { type: 'date', name: pair[0] });
      input.addEventListener('change', function () { update(pair[0], input.value); });
      controls[pair[0]] = input;
      form.appendChild(field(pair[1], input, 'epb-f-' + pair[0]));
    });
    var min = el('input', { type: 'number', name: 'min_disclosure', min: '0', max: '1',
      step: '0.05', placeholder: '0 to 1' });
    min.addEventListener('change', function () { update('min_disclosure', min.value); });
    controls.min_disclosure = min;
    form.appendChild(field('Minimum disclosure score', min, 'epb-f-min_disclosure'));

    var search = el('input', { type: 'search', name: 'q', placeholder: 'endpoint, model, run id\u2026' });
    search.addEventListener('input', function () { update('q', search.value, true); });
    controls.q = search;
    form.appendChild(field('Search', search, 'epb-f-q'));

    flagBox(form, controls, update, 'emulated', 'epb-f-emulated', 'Include emulated results');
    flagBox(form, controls, update, 'self_reported', 'epb-f-self_reported',
      'Include self-reported results');

    var reset = el('button', { type: 'button', 'class': 'md-button', id: 'epb-reset' }, 'Reset filters');
    reset.addEventListener('click', function () {
      var d = defaults();
      d.chart = state.chart; d.metric = state.metric;
      state = d; syncControls(); address.commit(state); render();
    });
    form.appendChild(el('div', { 'class': 'epb-field epb-actions' })).appendChild(reset);
  }

  function syncControls() {
    showState(controls, state);
    Object.keys(sortButtons).forEach(function (key) {
      var th = sortButtons[key].parentNode;
      if (state.sort === key) {
        th.setAttribute('aria-sort', state.dir === 'asc' ? 'ascending' : 'descending');
      } else {
        th.setAttribute('aria-sort', 'none');
      }
    });
    Object.keys(tabButtons).forEach(function (id) {
      tabButtons[id].setAttribute('aria-pressed', id === state.chart ? 'true' : 'false');
    });
  }

  function update(key, value, fromSearch) {
    state[key] = value;
    if (key === 'self_reported') { rowElements = new Map(); }  // the rank cells read it
    if (key !== 'chart' && key !== 'metric') { shown = PAGE_SIZE; }
    address.commit(state, fromSearch);
    syncControls();
    renderWithSeries();
  }

  // ---------------------------------------------------------------- table
  var table, tbody, countEl, moreButton, noteEl, hintEl, tableScroll;
  var hintDone = false;

  // A table wider than the page says so above it, with how many columns lie to the right (the
  // endpoint column stays in place while it scrolls, board.css). Measured on the first render
  // and on resize only: a filter change does not add columns.
  function updateScrollHint() { scrollHint(tableScroll, table, hintEl); }
  var sortButtons = {};

  function buildTable(container) {
    var scroll = el('div', { 'class': 'epb-scroll' });
    table = el('table', { 'class': 'epb-table', id: 'epb-table' });
    var caption = el('caption', null, config.table.caption);
    table.appendChild(caption);
    var thead = el('thead');
    var tr = el('tr');
    config.table.columns.forEach(function (col) {
      var th = el('th', { scope: 'col', 'aria-sort': 'none', 'data-key': col.key });
      // A long header gets a wider column on a phone (board.css).
      if (col.label.length > LONG_TEXT) { th.className = 'epb-long-head'; }
      var button = el('button', { type: 'button', 'class': 'epb-sort',
        title: (col.help ? col.help + ' ' : '') + '(Click to sort.)' }, col.label);
      button.addEventListener('click', function () {
        var dir = state.sort === col.key ? (state.dir === 'asc' ? 'desc' : 'asc')
          : (col.kind === 'text' || col.kind === 'link' || col.kind === 'run' ? 'asc' : 'desc');
        state.sort = col.key; state.dir = dir;
        address.commit(state); syncControls(); render();
      });
      sortButtons[col.key] = button;
      th.appendChild(button);
      addDefinition(th, col, config.root + 'methodology/');
      tr.appendChild(th);
    });
    thead.appendChild(tr);
    table.appendChild(thead);
    tbody = el('tbody');
    table.appendChild(tbody);
    scroll.appendChild(table);
    hintEl = el('p', { 'class': 'epb-scroll-hint', id: 'epb-scroll-hint', hidden: 'hidden' });
    container.appendChild(hintEl);
    container.appendChild(scroll);
    tableScroll = scroll;
    moreButton = el('button', { type: 'button', 'class': 'md-button', id: 'epb-more' }, 'Show more rows');
    moreButton.addEventListener('click', function () { shown += PAGE_SIZE; renderTable(); });
    container.appendChild(moreButton);
  }

  function cell(row, col) {
    var td = el('td');
    var value = row[col.key];
    if (col.kind === 'rank') {
      td.appendChild(rankBadge(viewReasons(row, state.self_reported === '1')));
      var tier = tierBadge(row);
      if (tier) {
        td.appendChild(document.createTextNode(' '));
        td.appendChild(tier);
      }
      if (row.confirmation && row.confirmed_by) {
        td.appendChild(document.createTextNode(' '));
        td.appendChild(el('a', { 'class': 'epb-confirm', href: config.root + 'runs/' +
          encodeURIComponent(row.confirmed_by) + '/' }, row.confirmation === 'confirmed'
          ? 'confirmed by an independent run' : 'disagrees with an independent run'));
      }
    } else if (col.kind === 'tier') {
      var badge = tierBadge(row);
      if (badge) { td.appendChild(badge); } else { td.textContent = fmt(null); }
    } else if (col.kind === 'link' && ENDPOINT_SLUG.test(String(value))) {
      // One rule on every page: a name links to its own page (the endpoint's), a result's
      // date to that result's run page.
      td.appendChild(el('a', { href: config.root + 'endpoints/' + encodeURIComponent(value) + '/' }, fmt(value)));
      if (String(value).length > LONG_TEXT) { td.className = 'epb-long'; }
    } else if (col.kind === 'cache') {
      // A hit rate, or why there is none: "not reported by the endpoint" is not 0%.
      if (typeof value === 'number') {
        td.textContent = fmt(value, 'pct');
        td.className = 'epb-num';
        td.title = row.cache_status === 'reported' ? String(value) : String(row.cache_status);
      } else {
        td.textContent = row.cache_status || fmt(null);
      }
    } else if (col.kind === 'run' && row.run_id) {
      td.appendChild(el('a', { href: config.root + 'runs/' + encodeURIComponent(row.run_id) + '/',
        title: 'this result\'s run page' }, fmt(value)));
    } else {
      td.textContent = fmt(value, col.format);
      if (td.textContent.length > LONG_TEXT) { td.className = 'epb-long'; }
      if (typeof value === 'number') {
        td.className = 'epb-num';
        td.title = String(value);
      } else if (col.kind === 'num') {
        td.className = 'epb-num';  // a missing figure sits where the figures do
      }
    }
    return td;
  }

  // A row's <tr> is built once and reused: its cells depend on the row alone.
  var rowElements = new Map();

  function rowElement(row) {
    var tr = rowElements.get(row);
    if (!tr) {
      tr = el('tr', row.run_id == null ? null : { 'data-run': row.run_id });
      config.table.columns.forEach(function (col) { tr.appendChild(cell(row, col)); });
      rowElements.set(row, tr);
    }
    return tr;
  }

  function renderTable() {
    var rows = filtered.slice(0, shown);
    var current = tbody.rows;
    var same = rows.length > 0 && current.length === rows.length && rows.every(function (row, i) {
      return current[i] === rowElements.get(row);
    });
    if (!same) {  // an unchanged table is left alone: no new layout of its rows
      var body = el('tbody');
      rows.forEach(function (row) { body.appendChild(rowElement(row)); });
      if (!rows.length) {
        var none = el('tr', { 'class': 'epb-none' });
        none.appendChild(el('td', { colspan: String(config.table.columns.length), 'class': 'epb-empty' },
          mainRows.length ? 'No result matches these filters.' : 'No result yet.'));
        body.appendChild(none);
      }
      table.replaceChild(body, tbody);
      tbody = body;
    }
    var total = mainRows.length;
    countEl.textContent = filtered.length === rows.length
      ? grouped(filtered.length) + ' of ' + plural(total, 'result') + ' shown'
      : grouped(rows.length) + ' of ' + plural(filtered.length, 'matching result') + ' shown (' +
        grouped(total) + ' in all)';
    moreButton.hidden = rows.length >= filtered.length;
    var hidden = 0;
    if (state.emulated !== '1' && state.division !== 'emulated') {
      hidden = mainRows.filter(function (r) { return r.division === 'emulated'; }).length;
    }
    var selfHidden = mainRows.filter(function (r) { return hiddenSelfReported(r, state); }).length;
    noteEl.textContent = (hidden
      ? plural(hidden, 'result') + ' from the endpoint emulator ' + (hidden === 1 ? 'is' : 'are') +
        ' hidden; tick \u201cInclude emulated results\u201d to see ' + (hidden === 1 ? 'it.' : 'them.')
      : '') + (hidden && selfHidden ? ' ' : '') + (selfHidden
      ? plural(selfHidden, 'self-reported result') + ' (no verified attestation) ' +
        (selfHidden === 1 ? 'is' : 'are') + ' hidden and not ranked; tick \u201cInclude ' +
        'self-reported results\u201d to see and rank ' + (selfHidden === 1 ? 'it.' : 'them.')
      : '');
  }

  // ---------------------------------------------------------------- downloads
  function exportRows() {
    return filtered.map(function (row) {
      var out = {};
      Object.keys(row).forEach(function (key) { if (key !== '_search') { out[key] = row[key]; } });
      return out;
    });
  }

  // ---------------------------------------------------------------- charts
  var tabButtons = {};
  var chartHost, chartTitle, chartCaption, chartAlt, chartEmpty, metricSelect;

  function buildCharts(container) {
    if (!config.charts.length) { return; }
    var section = el('section', { 'class': 'epb-charts', 'aria-label': 'Charts' });
    var tabs = el('div', { 'class': 'epb-tabs', role: 'group', 'aria-label': 'Chart' });
    config.charts.forEach(function (c) {
      var b = el('button', { type: 'button', 'class': 'epb-tab', 'data-chart': c.id,
        'aria-pressed': 'false' }, c.title);
      b.addEventListener('click', function () { update('chart', c.id); });
      tabButtons[c.id] = b;
      tabs.appendChild(b);
    });
    // One chart needs no choice: its title says what it is.
    if (config.charts.length > 1) { section.appendChild(tabs); }
    if (config.metrics && config.metrics.length) {
      metricSelect = select('metric', config.metrics.map(function (m) { return [m.key, m.label]; }),
        function (v) { update('metric', v); });
      controls.metric = metricSelect;
      var metricField = field('Metric', metricSelect, 'epb-f-metric');
      metricField.classList.add('epb-metric');
      section.appendChild(metricField);
    }
    chartTitle = el('h2', { id: 'epb-chart-title', 'class': 'epb-chart-title' });
    chartCaption = el('p', { id: 'epb-chart-caption', 'class': 'epb-chart-caption' });
    chartHost = el('div', { 'class': 'epb-chart', id: 'epb-chart', role: 'figure',
      'aria-labelledby': 'epb-chart-title', 'aria-describedby': 'epb-chart-caption epb-chart-summary' });
    var summary = el('p', { id: 'epb-chart-summary', 'class': 'epb-chart-summary', 'aria-live': 'polite' });
    chartAlt = el('details', { 'class': 'epb-chart-alt' });
    chartEmpty = el('p', { 'class': 'epb-empty', id: 'epb-chart-empty', hidden: 'hidden' },
      'Nothing to draw: no filtered result has the figures this chart needs. Widen the filters, or pick another chart.');
    section.appendChild(chartTitle);
    section.appendChild(chartCaption);
    section.appendChild(chartEmpty);
    section.appendChild(chartHost);
    section.appendChild(summary);
    section.appendChild(chartAlt);
    container.appendChild(section);
  }

  // Each chart source's rows by run id, built once (lib/reducers.js indexByRun).
  var sourceIndex = {};

  function indexSource(name) {
    if (sourceIndex[name] === undefined) { sourceIndex[name] = indexByRun(tables[name] || []); }
    return sourceIndex[name];
  }

  function chartRows(c, runIds) {
    var rows;
    if (c.source === config.table.source) {
      rows = filtered;
    } else {
      var index = indexSource(c.source);
      var fast = index && c.reduce === 'frontier' ? indexedFrontier(index, runIds) : null;
      if (fast) { return fast; }
      if (index) {
        rows = [];
        index.runs.forEach(function (id) {
          if (runIds.has(id)) { Array.prototype.push.apply(rows, index.byRun.get(id)); }
        });
      } else {
        rows = (tables[c.source] || []).filter(function (r) { return runIds.has(r.run_id); });
      }
    }
    return REDUCERS[c.reduce](rows, state.metric);
  }

  function renderAlt(c, rows) {
    var details = el('details', { 'class': 'epb-chart-alt', id: 'epb-chart-alt' });
    details.open = chartAlt.open;
    details.appendChild(el('summary', null, 'The data behind this chart, as a table (' + plural(rows.length, 'row') + ')'));
    var t = el('table', { 'class': 'epb-alt-table' });
    var head = el('tr');
    c.alt_columns.forEach(function (col) { head.appendChild(el('th', { scope: 'col' }, col.label)); });
    var thead = el('thead'); thead.appendChild(head); t.appendChild(thead);
    var body = el('tbody');
    rows.slice(0, ALT_ROWS_LIMIT).forEach(function (row) {
      var tr = el('tr');
      c.alt_columns.forEach(function (col) {
        var td = el('td', null, fmt(row[col.key]));
        if (typeof row[col.key] === 'number') { td.title = String(row[col.key]); }
        tr.appendChild(td);
      });
      body.appendChild(tr);
    });
    t.appendChild(body);
    details.appendChild(t);
    if (rows.length > ALT_ROWS_LIMIT) {
      details.appendChild(el('p', null, 'First ' + ALT_ROWS_LIMIT + ' of ' + rows.length + ' rows; the downloads hold all.'));
    }
    chartAlt.parentNode.replaceChild(details, chartAlt);
    chartAlt = details;
  }

  // A fixed pixel width, read once: with width "container" Vega measures its container on
  // every run, which forces a layout of the whole page (and the table) on each filter change.
  function chartWidth() {
    return Math.max(280, Math.floor(chartHost.getBoundingClientRect().width) - 8);
  }

  function metricLabel() {
    var m = (config.metrics || []).filter(function (x) { return x.key === state.metric; })[0];
    return m ? m.label : state.metric;
  }

  // The chart of a chosen metric names it on its value axis (embedded again when the metric
  // changes; a filter change keeps the embedded view).
  function specFor(c) {
    if (c.reduce !== 'history_metric') { return c.spec; }
    var spec = JSON.parse(JSON.stringify(c.spec));
    if (spec.encoding && spec.encoding.y) { spec.encoding.y.title = metricLabel(); }
    return spec;
  }

  function embed(c) {
    var holder = el('div', { 'class': 'epb-chart-view', 'data-chart': c.id });
    chartHost.appendChild(holder);
    var entry = { cfg: c, el: holder, view: null, ready: null, metric: state.metric };
    entry.ready = embedChart(holder, sized(specFor(c), chartWidth()))
      .then(function (result) { entry.view = result.view; return entry; });
    charts[c.id] = entry;
    return entry;
  }

  onResize(function () {
    Object.keys(charts).forEach(function (id) {
      var view = charts[id].view;
      if (view) { view.width(chartWidth()).runAsync(); }
    });
    if (tableScroll) { updateScrollHint(); }
  }, 200);

  // Rows the chart can place: the ones with every field it encodes (Vega drops the others
  // silently, so the summary would count marks that are not drawn).
  function drawable(c, rows) {
    var need = c.fields || [];
    if (!need.length) { return rows; }
    return rows.filter(function (r) {
      for (var i = 0; i < need.length; i++) { if (r[need[i]] == null) { return false; } }
      return true;
    });
  }

  function renderChart(runIds, timings) {
    timings = timings || {};
    var c0 = performance.now();
    if (!config.charts.length || !canDraw()) {
      return Promise.resolve();
    }
    var c = config.charts.filter(function (x) { return x.id === state.chart; })[0] || config.charts[0];
    var byMetric = c.reduce === 'history_metric';
    var label = metricLabel();
    chartTitle.textContent = byMetric ? label.charAt(0).toUpperCase() + label.slice(1) + ' over time' : c.title;
    chartCaption.textContent = c.caption;
    if (metricSelect) { metricSelect.parentNode.hidden = !byMetric; }
    if (byMetric && charts[c.id] && charts[c.id].metric !== state.metric) {
      if (charts[c.id].view) { charts[c.id].view.finalize(); }
      charts[c.id].el.remove();
      delete charts[c.id];
    }
    Object.keys(charts).forEach(function (id) { charts[id].el.hidden = id !== c.id; });
    var entry = charts[c.id] || embed(c);
    entry.el.hidden = false;
    var rows = drawable(c, chartRows(c, runIds));
    timings.reduce_ms = performance.now() - c0;
    var series = new Set(rows.map(function (r) { return r.series; })).size;
    document.getElementById('epb-chart-summary').textContent = rows.length
      ? chartTitle.textContent + ': ' + plural(rows.length, 'mark') + ' for ' + plural(series, 'endpoint \u00b7 workload') + '.'
      : '';
    chartEmpty.hidden = rows.length > 0;
    chartHost.classList.toggle('epb-chart-none', rows.length === 0);
    var a0 = performance.now();
    renderAlt(c, rows);
    timings.alt_ms = performance.now() - a0;
    return entry.ready.then(function (e) {
      var v0 = performance.now();
      return replaceRows(e.view, c.dataset, rows).then(function () {
        timings.vega_ms = performance.now() - v0;
      });
    });
  }

  // ---------------------------------------------------------------- render
  function render() {
    var t0 = performance.now();
    filtered = sortedMain().filter(function (row) { return passes(row, state); });
    var t1 = performance.now();
    renderTable();
    showSuitePool(suitePool(state.self_reported === '1', state.emulated === '1'));
    if (!board.renders && !hintDone) { hintDone = true; updateScrollHint(); }
    var t2 = performance.now();
    var runIds = new Set(filtered.map(function (r) { return r.run_id; }));
    var timings = { filter_ms: t1 - t0, table_ms: t2 - t1 };
    pending = renderChart(runIds, timings).then(function () {
      timings.total_ms = performance.now() - t0;
      board.timings = timings;
      board.lastRenderMs = timings.total_ms;
      host.setAttribute('data-renders', String(++board.renders));
    }, function (err) {
      host.setAttribute('data-chart-error', String(err && err.message || err));
      if (window.console) { console.warn('epbench chart:', err); }
    });
    return pending;
  }

  var board = {
    renders: 0,
    lastRenderMs: null,
    idle: function () { return pending; },
    frontier: frontierOf,
    visibleRunIds: function () {
      return Array.prototype.filter.call(tbody.rows, function (tr) { return tr.hasAttribute('data-run'); })
        .map(function (tr) { return tr.getAttribute('data-run'); });
    },
    view: function () {
      var entry = charts[state.chart];
      return entry ? entry.view : null;
    },
    chartData: function () {
      var entry = charts[state.chart];
      return entry && entry.view ? entry.view.data(entry.cfg.dataset) : null;
    },
    state: function () { return Object.assign({}, state); }
  };
  window.epbBoard = board;

  function start() {
    prepareMain();
    state = readUrl();
    var form = controlForm('epb-filters', 'Filter results');
    buildControls(form);
    host.appendChild(form);
    countEl = el('p', { 'class': 'epb-count', id: 'epb-count', 'aria-live': 'polite' });
    host.appendChild(countEl);
    noteEl = el('p', { 'class': 'epb-note-line', id: 'epb-note' });
    host.appendChild(noteEl);
    var actions = el('div', { 'class': 'epb-downloads' });
    var csv = el('button', { type: 'button', 'class': 'md-button', id: 'epb-csv' }, 'Download these rows (CSV)');
    csv.addEventListener('click', function () { download(toCsv(filtered, config.table.export_columns), 'text/csv', 'epbench-' + config.page + '.csv'); });
    var json = el('button', { type: 'button', 'class': 'md-button', id: 'epb-json' }, 'Download these rows (JSON)');
    json.addEventListener('click', function () {
      download(JSON.stringify(exportRows(), null, 1), 'application/json', 'epbench-' + config.page + '.json');
    });
    actions.appendChild(csv);
    actions.appendChild(json);
    host.appendChild(actions);
    buildCharts(host);
    buildTable(host);
    syncControls();
    window.addEventListener('popstate', function () {
      state = readUrl(); shown = PAGE_SIZE; syncControls(); renderWithSeries();
    });
    onScheme(function () {  // the other palette: the charts are embedded again in its colours
      Object.keys(charts).forEach(function (id) { charts[id].el.remove(); delete charts[id]; });
      render();
    });
    return renderWithSeries();
  }

  board.ready = load().then(start).catch(function (err) { loadFailed(host, err); });
})();
