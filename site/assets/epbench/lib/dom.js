/* Elements built with createElement/textContent only: no string from the data is ever parsed
 * as HTML. */

export function el(tag, attrs, text) {
  var node = document.createElement(tag);
  if (attrs) {
    Object.keys(attrs).forEach(function (key) { node.setAttribute(key, attrs[key]); });
  }
  if (text !== undefined && text !== null) { node.textContent = String(text); }
  return node;
}

// Calls back once the window has stopped resizing for `wait` ms.
export function onResize(callback, wait) {
  var timer = null;
  window.addEventListener('resize', function () { clearTimeout(timer); timer = setTimeout(callback, wait); });
}
