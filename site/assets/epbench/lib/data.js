/* The view files the pages read (data/view/*.json, same origin, written by the generator). */
import { el } from './dom.js';

// A compact view file ({columns, rows}) as one object per row.
function toObjects(view) {
  var cols = view.columns;
  return view.rows.map(function (values) {
    var row = {};
    for (var i = 0; i < cols.length; i++) { row[cols[i]] = values[i]; }
    return row;
  });
}

// Fetch a view file from this site and return its rows (rejects with the file's name).
export function fetchView(url) {
  return fetch(url, { credentials: 'same-origin' }).then(function (resp) {
    if (!resp.ok) { throw new Error('cannot load ' + url); }
    return resp.json();
  }).then(toObjects);
}

// The error text of a failed data load, on the page and in `data-error`. (A page opened from
// a file runs no module at all: file_note.js says how to serve it.)
export function loadFailed(host, err) {
  host.setAttribute('data-error', String(err && err.message || err));
  host.appendChild(el('p', { 'class': 'epb-note' },
    'The leaderboard data could not be loaded: ' + (err && err.message || err)));
}
