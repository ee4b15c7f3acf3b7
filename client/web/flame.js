/* SPDX-License-Identifier: BSD-3-Clause */
// What both pages (app.js, compare.js) need to draw a flame graph with
// d3-flame-graph (client/web/vendor/): the library draws into a d3
// selection, and reads and sets the element's datum (__data__, as d3 keeps
// it) through the few calls below, all it makes of the selection; and the
// path of names that finds a frame again in a new tree.
(function () {
  'use strict';

  function select(el) {
    return {
      each: function (f) { f.call(el, el.__data__, 0, [el]); return this; },
      datum: function (v) {
        if (!arguments.length) return el.__data__;
        el.__data__ = typeof v === 'function' ? v.call(el, el.__data__, 0, [el]) : v;
        return this;
      },
      selectAll: function (q) {
        var found = Array.prototype.slice.call(el.querySelectorAll(q));
        return {remove: function () { found.forEach(function (n) { n.remove(); }); }};
      }
    };
  }

  // The names from the root to frame `d` (the root's own left out).
  function namePath(d) {
    var names = [];
    for (; d && d.parent; d = d.parent) names.unshift(d.data.name);
    return names;
  }

  // The frame at `names` under `root` (a tree's node, or its data), or
  // undefined.
  function findPath(root, names, kids) {
    var d = root;
    for (var i = 0; i < names.length && d; i++)
      d = (kids(d) || []).filter(function (c) { return (c.data || c).name === names[i]; })[0];
    return d;
  }

  window.esFlame = {select: select, namePath: namePath, findPath: findPath};
})();
