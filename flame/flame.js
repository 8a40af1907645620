// perfspill-flame's script, built into every flame graph it writes:
// hover shows a frame and its share, a click zooms into a frame (its
// callers stay, faded, and zoom back out when clicked; "Back" undoes one
// zoom, "Reset zoom" or Escape all of them), and the search box
// highlights the frames whose names match, with their share of the total.
// A graph taller than the window opens scrolled to its root, the widest
// frames, with the title, buttons, legend and details line kept in view.
// Every frame is a <g class="f"> with its first sample (data-s), its
// samples (data-n) and its depth (data-d); in a differential graph
// data-n is its width (the mean of its shares), data-a and data-b its
// samples in A and B, data-c the change of its share in points, and the
// hover line (its title) says all of them.
"use strict";
var flame = {};

function flameInit(evt) {
	var svg = document.documentElement;
	flame.svg = svg;
	flame.total = +svg.getAttribute("data-total");
	flame.xpad = +svg.getAttribute("data-xpad");
	flame.width = +svg.getAttribute("width") - 2 * flame.xpad;
	flame.charw = +svg.getAttribute("data-font") *
	    +svg.getAttribute("data-charw");
	flame.frames = Array.prototype.slice.call(
	    document.querySelectorAll("g.f"));
	flame.details = document.getElementById("details");
	flame.matched = document.getElementById("matched");
	flame.unzoom = document.getElementById("unzoom");
	flame.back = document.getElementById("back");
	flame.search = document.getElementById("search");
	flame.zoomed = null;
	flame.history = [];
	flame.frames.forEach(function (g) {
		g.fs = +g.getAttribute("data-s");
		g.fn = +g.getAttribute("data-n");
		g.fd = +g.getAttribute("data-d");
		var t = g.querySelector("title").textContent;
		g.fname = t.substring(0, t.lastIndexOf(" ("));
		g.ftitle = t;
		g.frect = g.querySelector("rect");
		g.ftext = g.querySelector("text");
		g.fcolor = g.frect.getAttribute("fill");
	});
	svg.addEventListener("click", function (e) {
		var g = flameFrame(e.target);
		if (g)
			flameZoom(g, true);
	});
	svg.addEventListener("mouseover", function (e) {
		var g = flameFrame(e.target);
		flame.details.textContent = g ? g.ftitle : " ";
	});
	svg.addEventListener("mouseout", function (e) {
		if (flameFrame(e.target))
			flame.details.textContent = " ";
	});
	flame.unzoom.addEventListener("click", function (e) {
		e.stopPropagation();
		flame.history = [];
		flameZoom(null, false);
	});
	flame.back.addEventListener("click", function (e) {
		e.stopPropagation();
		flameZoom(flame.history.length ? flame.history.pop() : null,
		    false);
	});
	flame.search.addEventListener("input", function () {
		flameSearch(flame.search.value);
	});
	flame.search.addEventListener("click", function (e) {
		e.stopPropagation();
	});
	flameWiden();
	flameSticky();
	window.addEventListener("resize", flameWiden);
	document.addEventListener("keydown", function (e) {
		if (e.key === "Escape") {
			flame.history = [];
			flameZoom(null, false);
		} else if ((e.ctrlKey || e.metaKey) && e.key === "f") {
			e.preventDefault();
			flame.search.focus();
		}
	});
}

// The header (title to legend) and the details line float over the
// frames as the window scrolls; the first screen shows the root: at the
// bottom of a flame graph, which may be far below a window's height.
function flameSticky() {
	var svg = flame.svg, ns = "http://www.w3.org/2000/svg";
	var height = +svg.getAttribute("height");
	var head = document.createElementNS(ns, "g");
	var foot = document.createElementNS(ns, "g");
	var bg = document.createElementNS(ns, "rect");
	bg.setAttribute("id", "headbg");
	bg.setAttribute("width", svg.getAttribute("width"));
	bg.setAttribute("height", "68");
	bg.setAttribute("fill", "#f8f8f4");
	head.appendChild(bg);
	["title", "subtitle", "unzoom", "back", "matched", "legend"].forEach(
	    function (id) {
		head.appendChild(document.getElementById(id));
	});
	head.appendChild(flame.search.parentNode);
	foot.appendChild(flame.details);
	svg.appendChild(head);
	svg.appendChild(foot);
	// the window's height less a scroll bar's
	function seen() {
		return window.visualViewport ? window.visualViewport.height :
		    window.innerHeight;
	}
	function place() {
		var y = window.scrollY || 0;
		var below = height - y - seen();
		head.setAttribute("transform", "translate(0," + y + ")");
		foot.setAttribute("transform", "translate(0," +
		    (below > 0 ? -below : 0) + ")");
	}
	// to the bottom, once the root is below the window; again when the
	// window changes (a browser may size it after the load) unless the
	// reader has scrolled since
	var root = flame.frames.filter(function (g) { return g.fd === 0; })[0];
	var mine = null;
	function toRoot() {
		if (root && (mine === null || window.scrollY === mine) &&
		    root.frect.getBoundingClientRect().bottom > seen()) {
			window.scrollTo(0, height);
			mine = window.scrollY;
		}
		place();
	}
	window.addEventListener("scroll", place);
	window.addEventListener("resize", toRoot);
	if (window.visualViewport)
		window.visualViewport.addEventListener("resize", toRoot);
	toRoot();
}

// The graph as wide as the window, unless --width fixed its width
// (data-fit): frames, labels and header laid out again for the width,
// at the load and at each resize, so that a wide screen shows more of
// each name. The file's own width stays what other viewers draw.
function flameWiden() {
	var svg = flame.svg, w0 = +svg.getAttribute("data-width");
	if (svg.getAttribute("data-fit") !== "1")
		return;
	// the window's width less a scroll bar's: what 100% gives
	svg.setAttribute("width", "100%");
	var w = Math.floor(svg.getBoundingClientRect().width);
	if (!(w >= 400))
		w = w0;
	svg.setAttribute("width", w);
	svg.setAttribute("viewBox", "0 0 " + w + " " +
	    svg.getAttribute("height"));
	flame.width = w - 2 * flame.xpad;
	["bg", "headbg"].forEach(function (id) {
		var r = document.getElementById(id);
		if (r)
			r.setAttribute("width", w);
	});
	document.getElementById("title").setAttribute("x", w / 2);
	document.getElementById("subtitle").setAttribute("x", w / 2);
	flame.matched.setAttribute("x", w - flame.xpad);
	flame.search.parentNode.setAttribute("x", w - flame.xpad - 350);
	document.getElementById("legend").setAttribute("transform",
	    "translate(" + Math.round((w - w0) / 2) + ",0)");
	flameZoom(flame.zoomed, false);
}

function flameFrame(el) {
	while (el && el !== flame.svg) {
		if (el.classList && el.classList.contains("f"))
			return el;
		el = el.parentNode;
	}
	return null;
}

// The name cut to fit w pixels, as the SVG was written.
function flameFit(name, w) {
	var chars = Math.floor((w - 6) / flame.charw);
	if (w < 6 || chars < 3)
		return "";
	if (name.length <= chars)
		return name;
	// as svg.c's SVG_MIN_CUT: "s.." names nothing
	if (chars - 2 < 4)
		return "";
	return name.substring(0, chars - 2) + "..";
}

// Zoom into frame z (null: the whole graph). remember: a click, which
// "Back" can undo.
function flameZoom(z, remember) {
	if (remember && z === flame.zoomed)
		return;
	if (remember)
		flame.history.push(flame.zoomed);
	var s0 = z ? z.fs : 0, n0 = z ? z.fn : flame.total, d0 = z ? z.fd : 0;
	flame.zoomed = z;
	flame.frames.forEach(function (g) {
		var inside = g.fs >= s0 && g.fs + g.fn <= s0 + n0 && g.fd >= d0;
		var above = g.fd < d0 && g.fs <= s0 && g.fs + g.fn >= s0 + n0;
		g.classList.toggle("hide", !inside && !above);
		g.classList.toggle("parent", above);
		if (!inside && !above)
			return;
		var x = flame.xpad, w = flame.width;
		if (inside) {
			x = flame.xpad + (g.fs - s0) * flame.width / n0;
			w = g.fn * flame.width / n0;
		}
		g.frect.setAttribute("x", x.toFixed(1));
		g.frect.setAttribute("width", w.toFixed(1));
		g.ftext.setAttribute("x", (x + 3).toFixed(1));
		g.ftext.textContent = flameFit(g.fname, w);
	});
	flame.unzoom.classList.toggle("hide", z === null);
	flame.back.classList.toggle("hide", z === null);
	if (flame.search.value)
		flameSearch(flame.search.value);
}

// Highlight the frames whose names match term (a regular expression, or
// the text itself when it is not one); the share counts each sample once.
function flameSearch(term) {
	var re = null, spans = [];
	if (term) {
		try {
			re = new RegExp(term);
		} catch (err) {
			re = new RegExp(term.replace(/[.*+?^${}()|[\]\\]/g,
			    "\\$&"));
		}
	}
	flame.frames.forEach(function (g) {
		var hit = re !== null && re.test(g.fname);
		g.frect.setAttribute("fill", hit ? "rgb(230,0,230)" : g.fcolor);
		g.classList.toggle("match", hit);
		if (hit)
			spans.push([g.fs, g.fs + g.fn]);
	});
	if (re === null) {
		flame.matched.textContent = " ";
		return;
	}
	spans.sort(function (a, b) { return a[0] - b[0]; });
	var sum = 0, end = -1;
	spans.forEach(function (sp) {
		if (sp[0] >= end) {
			sum += sp[1] - sp[0];
			end = sp[1];
		} else if (sp[1] > end) {
			sum += sp[1] - end;
			end = sp[1];
		}
	});
	flame.matched.textContent = "Matched: " +
	    (100 * sum / flame.total).toFixed(1) + "%";
}
