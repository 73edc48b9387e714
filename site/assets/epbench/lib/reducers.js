/* The boards' chart reducers (generator/charts.py names one per chart, and its caption says
 * what it does): the rows of a chart source reduced to the tens of marks Vega draws. The
 * Pareto frontier here is the one rule of epcore/metrics/pareto.py (tests/browser/
 * test_frontier_js.py holds the two to each other). */

// Faint (dominated) points are drawn only up to this many usable rows.
var FAINT_POINTS_LIMIT = 400;

function seriesOf(row) { return row.endpoint_id + ' \u00b7 ' + row.workload_id; }

function tierSeries(row) {
  return seriesOf(row) + (row.tier && row.tier !== 'attested' ? ' (' + row.tier + ')' : '');
}

function median(values) {
  var v = values.slice().sort(function (a, b) { return a - b; });
  var n = v.length;
  if (!n) { return null; }
  return n % 2 ? v[(n - 1) / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

function groupBy(rows, keyOf) {
  var groups = new Map();
  rows.forEach(function (row) {
    var key = keyOf(row);
    var list = groups.get(key);
    if (!list) { list = []; groups.set(key, list); }
    list.push(row);
  });
  return groups;
}

function newest(rows) {
  var out = [];
  groupBy(rows, seriesOf).forEach(function (list, series) {
    var best = list.reduce(function (a, b) {
      return (b.date > a.date || (b.date === a.date && b.run_id > a.run_id)) ? b : a;
    });
    var copy = Object.assign({}, best);
    copy.series = series;
    delete copy._search;
    out.push(copy);
  });
  return out;
}

// One mark per series and value of `key`: the median of each of `fields` over the rows that
// have them all (and, when `keyNeeded`, the key), with how many rows it stands for in `n`.
function medians(key, fields, keyNeeded) {
  return function (rows) {
    var usable = rows.filter(function (r) {
      return (!keyNeeded || r[key] != null) && fields.every(function (f) { return r[f] != null; });
    });
    var out = [];
    groupBy(usable, function (r) { return seriesOf(r) + '\u0000' + r[key]; }).forEach(function (list) {
      var mark = { series: seriesOf(list[0]) };
      mark[key] = list[0][key];
      fields.forEach(function (f) { mark[f] = median(list.map(function (r) { return r[f]; })); });
      mark.n = list.length;
      out.push(mark);
    });
    return out;
  };
}

// The newest result per series among those that have `field`.
function newestWith(field) {
  return function (rows) { return newest(rows.filter(function (r) { return r[field] != null; })); };
}

// The Pareto frontier: the one rule of epcore/metrics/pareto.py, written once here. Rows
// sorted by descending tps_per_user, then descending system_tps (a stable sort: exact ties
// keep source order); walking them, a row is on the frontier when its system_tps is above
// every system_tps before it. `walkFrontier` visits each sorted row that `keep` accepts
// (all when keep is null) with that verdict.
function usableForFrontier(r) { return r.tps_per_user != null && r.system_tps != null; }
function byFrontierOrder(a, b) { return b.tps_per_user - a.tps_per_user || b.system_tps - a.system_tps; }

function walkFrontier(sorted, keep, visit) {
  var best = -Infinity;
  sorted.forEach(function (r) {
    if (keep && !keep(r)) { return; }
    var onFrontier = r.system_tps > best;
    if (onFrontier) { best = r.system_tps; }
    visit(r, onFrontier);
  });
}

// The frontier rows of one series, ascending tps_per_user (as pareto.frontier returns them).
export function frontierOf(rows) {
  var out = [];
  walkFrontier(rows.filter(usableForFrontier).sort(byFrontierOrder), null, function (r, on) {
    if (on) { out.push(r); }
  });
  return out.reverse();
}

export var REDUCERS = {
  frontier: function (rows) {
    var usable = rows.filter(usableForFrontier);
    var faint = usable.length <= FAINT_POINTS_LIMIT;
    var out = [];
    groupBy(usable, seriesOf).forEach(function (list, series) {
      walkFrontier(list.sort(byFrontierOrder), null, function (r, onFrontier) {
        if (onFrontier || faint) {
          out.push({ series: series, run_id: r.run_id, point: r.point, tps_per_user: r.tps_per_user,
            system_tps: r.system_tps, frontier: onFrontier });
        }
      });
    });
    return out;
  },
  ttft_by_concurrency: medians('concurrency', ['ttft_ms_p90'], true),
  cost_by_speed: medians('point', ['tps_per_user', 'usd_per_mtok_output'], false),
  latest: newestWith('success_rate'),
  latest_priced: newestWith('usd_per_successful_task'),
  // Workloads with load levels: one row per level of the newest result per series.
  load_levels: function (rows) {
    var out = [];
    newest(rows.filter(function (r) { return r.load_levels && r.load_levels.length; })).forEach(function (r) {
      r.load_levels.forEach(function (l) {
        out.push({ series: r.series, run_id: r.run_id, agents: l.agents,
          success_rate: l.success_rate, success_ci_low: l.success_ci_low,
          success_ci_high: l.success_ci_high, decision_ms_p90: l.decision_ms_p90,
          slo_ms: r.agents_slo_decision_p90_ms, at_slo: !!l.at_slo });
      });
    });
    return out;
  },
  retry_by_tag: function (rows) {
    var out = [];
    newest(rows).forEach(function (r) {
      ['productive', 'repair', 'recovery', 'transport'].forEach(function (tag) {
        var usd = r['retry_' + tag + '_usd'];
        if (usd == null) { return; }
        out.push({ series: r.series, tag: tag, usd: usd, requests: r['retry_' + tag + '_requests'],
          tokens: r['retry_' + tag + '_tokens'], seconds: r['retry_' + tag + '_seconds'] });
      });
    });
    return out;
  },
  // Tiers are kept apart as the history rows are: the results of a tier other than the
  // scheduled benchmark's draw their own line, named with their tier.
  history_metric: function (rows, metric) {
    var out = [];
    var usable = rows.filter(function (r) { return r[metric] != null && r.date; });
    // Every row is its own mark (a daily median until an endpoint is picked, then each
    // result). Marks that share a day are spread over it so that none hides another: the
    // k-th of n (by series, then run id) sits at (k + 1) / (n + 1) of the day, in `at`.
    groupBy(usable, function (r) { return r.date; }).forEach(function (list) {
      list.sort(function (a, b) {
        var x = tierSeries(a).localeCompare(tierSeries(b));
        return x || String(a.run_id || '').localeCompare(String(b.run_id || ''));
      });
      list.forEach(function (r, k) {
        var minutes = Math.round((k + 1) * 1440 / (list.length + 1));
        var at = String(r.date).slice(0, 10) + 'T' + String(100 + Math.floor(minutes / 60)).slice(1) +
          ':' + String(100 + minutes % 60).slice(1) + ':00';
        out.push({ series: tierSeries(r), date: r.date, at: at, metric: metric, value: r[metric],
          tier: r.tier || null,
          run_id: r.run_id || (r.results > 1 ? r.results + ' runs (median)' : null) });
      });
    });
    return out;
  }
};

// A chart source's rows by run id, built once: a filter change then concatenates the lists of
// the matching runs instead of scanning every row. `runs` keeps the source's order, so the
// rows come out in the same order as a scan when each run's rows are contiguous (otherwise
// the index is not used).
export function indexByRun(rows) {
  var byRun = new Map();
  var runs = [];
  var contiguous = true;
  var last = {};
  rows.forEach(function (r) {
    var list = byRun.get(r.run_id);
    if (!list) {
      list = []; byRun.set(r.run_id, list); runs.push(r.run_id);
    } else if (r.run_id !== last) {
      contiguous = false;
    }
    list.push(r);
    last = r.run_id;
  });
  return contiguous ? { byRun: byRun, runs: runs, series: null } : null;
}

// The frontier reducer without faint points, from the index: each series' usable rows sorted
// once (a stable sort of source order, as the reducer sorts), walked skipping the runs that do
// not match. Same rows, order and tie rule as REDUCERS.frontier; null when faint points are
// drawn (few rows), where the reducer itself runs.
export function indexedFrontier(index, runIds) {
  if (!index.series) {
    index.series = new Map();   // series -> usable rows in frontier order
    index.runSeries = new Map();  // run id -> [series of its usable rows, first-seen order]
    index.usable = new Map();     // run id -> usable row count
    index.runs.forEach(function (id) {
      var names = [];
      var n = 0;
      index.byRun.get(id).forEach(function (r) {
        if (!usableForFrontier(r)) { return; }
        n++;
        var series = seriesOf(r);
        if (names.indexOf(series) < 0) { names.push(series); }
        var list = index.series.get(series);
        if (!list) { list = []; index.series.set(series, list); }
        list.push(r);
      });
      index.runSeries.set(id, names);
      index.usable.set(id, n);
    });
    index.series.forEach(function (list) { list.sort(byFrontierOrder); });
  }
  var count = 0;
  var order = new Set();
  index.runs.forEach(function (id) {
    if (!runIds.has(id)) { return; }
    count += index.usable.get(id);
    index.runSeries.get(id).forEach(function (series) { order.add(series); });
  });
  if (count <= FAINT_POINTS_LIMIT) { return null; }
  var out = [];
  var matching = function (r) { return runIds.has(r.run_id); };
  order.forEach(function (series) {
    walkFrontier(index.series.get(series), matching, function (r, onFrontier) {
      if (onFrontier) {
        out.push({ series: series, run_id: r.run_id, point: r.point, tps_per_user: r.tps_per_user,
          system_tps: r.system_tps, frontier: true });
      }
    });
  });
  return out;
}

