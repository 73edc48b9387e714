/* Whether a row is ranked, and why not; its provenance tier; which pooled suite table the
 * reader's include controls pick. */
import { el } from './dom.js';

// Why a row is not ranked: the `unranked_reasons` column (a list, or "; "-joined text) when
// the tables carry it, else what `rankable` alone says.
export function unrankedReasons(row) {
  var r = row.unranked_reasons;
  if (Array.isArray(r) && r.length) { return r; }
  if (typeof r === 'string' && r) { return r.split('; '); }
  if (row.rankable !== false) { return []; }
  return [row.division === 'emulated' ? 'emulated endpoint: epbench\u2019s own emulator, never ranked'
    : 'not rankable'];
}

// The reasons a row is not ranked in the reader's view: a self-reported row's first reason is
// its tier's (epcore/rankable.py puts it first), and a reader who includes self-reported
// results sets it aside, so such a row with no other reason ranks.
export function viewReasons(row, includeSelfReported) {
  var reasons = unrankedReasons(row);
  if (includeSelfReported && row.tier === 'self-reported' && reasons.length) {
    return reasons.slice(1);
  }
  return reasons;
}

// "ranked" or "not ranked", with the reasons in the tooltip (the boards' rank cells, the buyer
// pages' badges).
export function rankBadge(reasons) {
  return el('span', { 'class': 'epb-badge ' + (reasons.length ? 'epb-badge-no' : 'epb-badge-ok'),
    title: reasons.length ? 'Not ranked: ' + reasons.join('; ') : 'Rankable: passes every leaderboard rule' },
  reasons.length ? 'not ranked' : 'ranked');
}

// A row's provenance tier as a badge, with its reason in the tooltip (the boards' rows, the
// buyer pages' rows); null for a row that carries no tier.
export function tierBadge(row) {
  if (!row.tier) { return null; }
  return el('span', { 'class': 'epb-badge epb-tier', title: 'Provenance: ' + row.tier +
    (row.tier_reason ? ' (' + row.tier_reason + ')' : '') }, row.tier);
}

// The suite tables (agentic_suite.html.j2) are pooled four ways; the reader's controls pick
// one: every result, all but self-reported ones, ranked with self-reported ones, ranked only.
export function suitePool(includeSelf, includeUnranked) {
  if (includeUnranked) { return includeSelf ? 'all' : 'unranked'; }
  return includeSelf ? 'self' : 'ranked';
}

export function showSuitePool(pool) {
  var box = document.getElementById('epb-suite');
  if (!box) { return; }
  Array.prototype.forEach.call(box.querySelectorAll('.epb-suite-pool'), function (div) {
    div.hidden = (div.getAttribute('data-pools') || '').split(' ').indexOf(pool) < 0;
  });
}
