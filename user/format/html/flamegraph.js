// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * labelprof's HTML page: flame graph, CPU by label value and the label filter,
 * drawn from the JSON blob output_html.c embeds (its layout is described
 * there). Every string from the profile is untrusted: it only ever reaches the
 * page through textContent, never as markup.
 *
 * The filter is a set of (key, value) pairs ANDed together, at most one per
 * key; a value of null means "the key is not set". It lives in the URL hash
 * as key=value pairs joined by & (a bare key: not set), URI-encoded.
 *
 * Large profiles: the distinct (process, stack) paths are sorted once, by
 * frame names; a filter only sums counts per path, and the flame graph's
 * tree is then built in one pass over the sorted paths into flat arrays
 * (depth-first order, children sorted by name), with no object per node.
 */
(function () {
	'use strict';

	const KIND_USER = 0;
	const KIND_KERNEL = 1;
	const KIND_PYTHON = 2;
	const KIND_INLINED = 3;
	const KIND_PROCESS = 4;
	const KIND_ROOT = 5;
	const KIND_JAVA = 6;
	const KIND_JS = 7;
	const KIND_NAMES = ['user', 'kernel', 'python', 'inlined', 'process', 'all', 'java', 'js'];
	const ROW_PX = 18;
	const MIN_FRAME_PX = 1.5; // narrower frames (and what they call) are not drawn
	const MAX_FRAMES = 12000; // drawn at most, the top rows first
	const TOP_VALUES = 12; // label values listed per key, the rest summed up
	const UNSET = '(not set)';

	function byId(id) {
		return document.getElementById(id);
	}

	function elem(tag, className, text) {
		const e = document.createElement(tag);
		if (className)
			e.className = className;
		if (text !== undefined)
			e.textContent = text;
		return e;
	}

	function fmtInt(n) {
		return Math.round(n).toLocaleString('en-US');
	}

	function fmtPct(part, whole) {
		if (!whole)
			return '0 %';
		const p = (100 * part) / whole;
		return (p >= 10 || p === 0 ? p.toFixed(1) : p.toFixed(2)) + ' %';
	}

	function fmtDuration(ns) {
		if (ns >= 60e9)
			return (ns / 60e9).toFixed(1) + ' min';
		if (ns >= 1e9)
			return (ns / 1e9).toFixed(2) + ' s';
		if (ns >= 1e6)
			return (ns / 1e6).toFixed(1) + ' ms';
		return fmtInt(ns / 1e3) + ' µs';
	}

	function cmpText(a, b) {
		return a < b ? -1 : a > b ? 1 : 0;
	}

	let data;
	try {
		data = JSON.parse(byId('labelprof-data').textContent);
	} catch (e) {
		const message = 'The profile data on this page is damaged: ' + e.message;
		byId('flame').replaceChildren(elem('div', 'empty', message));
		return;
	}

	function array(x) {
		return Array.isArray(x) ? x : [];
	}

	const strings = array(data.strings);
	const meta = data.meta || {};

	function str(id) {
		const s = strings[id];
		return typeof s === 'string' ? s : '';
	}

	/* ---- frames, stacks, label sets, samples -------------------------------- */

	function moduleBase(module) {
		let base = module.slice(module.lastIndexOf('/') + 1);
		// "[vdso]" shows as "[vdso+0x...]", as in the folded format.
		if (base.length >= 2 && base[0] === '[' && base[base.length - 1] === ']')
			base = base.slice(1, -1);
		return base;
	}

	/* One object per distinct (kind, name, module); id: index in frames. */
	const frames = [];
	const frameIds = new Map();

	function frame(name, module, kind) {
		const text = kind + '\u0000' + name + '\u0000' + module;
		let f = frameIds.get(text);
		if (f === undefined) {
			f = { id: frames.length, rank: 0, name: name, module: module, kind: kind };
			frames.push(f);
			frameIds.set(text, f);
		}
		return f;
	}

	/* Each location as its frames, caller first. */
	const locFrames = array(data.locs).map(function (loc) {
		if (!Array.isArray(loc))
			return [];
		const module = str(loc[0]);
		const kind =
			loc[1] === KIND_KERNEL ||
			loc[1] === KIND_PYTHON ||
			loc[1] === KIND_JAVA ||
			loc[1] === KIND_JS
				? loc[1]
				: KIND_USER;
		const rest = loc.slice(2);
		if (!rest.length || typeof rest[0] === 'string') {
			const offset = rest.length ? '+' + rest[0] : '';
			const name = module ? '[' + moduleBase(module) + offset + ']' : '[unknown]';
			return [frame(name, module, kind)];
		}
		return rest.map(function (id, i) {
			return frame(str(id) || '[unknown]', module, i ? KIND_INLINED : kind);
		});
	});

	/* Each location's source file and line per frame: [file string id, line]. */
	const srcs = array(data.srcs);
	const locSrcs = locFrames.map(function (fs, i) {
		const s = array(srcs[i]);
		return fs.map(function (f, j) {
			return [s[2 * j], s[2 * j + 1]];
		});
	});

	/* Each stack as its frames, root first, and their sources (stackSrcs, alike). */
	const stackSrcs = [];
	const stacks = array(data.stacks).map(function (st) {
		const out = [];
		const src = [];
		for (const loc of array(st)) {
			const fs = locFrames[loc] || [];
			for (let j = 0; j < fs.length; j++) {
				out.push(fs[j]);
				src.push(locSrcs[loc][j]);
			}
		}
		stackSrcs.push(src);
		return out;
	});
	if (!stacks.length) {
		stacks.push([]);
		stackSrcs.push([]);
	}

	/* Label sets as flat [key, value, ...] string ids; every key with its values. */
	const keyValues = new Map();
	const sets = array(data.sets).map(function (set) {
		const out = [];
		for (let i = 0; i + 1 < array(set).length; i += 2) {
			out.push(set[i], set[i + 1]);
			if (!keyValues.has(set[i]))
				keyValues.set(set[i], new Set());
			keyValues.get(set[i]).add(set[i + 1]);
		}
		return out;
	});
	if (!sets.length)
		sets.push([]);

	function valueOf(set, key) {
		for (let i = 0; i < set.length; i += 2)
			if (set[i] === key)
				return set[i + 1];
		return -1;
	}

	/* Sorted once the samples are read (below). */
	const keys = Array.from(keyValues.keys());

	/* The string id of a key and of one of its values from their text; -2: none. */
	function keyId(text) {
		const k = keys.find(function (k) {
			return str(k) === text;
		});
		return k === undefined ? -2 : k;
	}

	function valueId(k, text) {
		for (const v of keyValues.get(k) || [])
			if (str(v) === text)
				return v;
		return -2;
	}

	/*
	 * Samples: each becomes a count on its label set and on its path, the
	 * distinct (process, stack, dropped) triple that the flame graph draws.
	 */
	const raw = array(data.samples);
	const nsamples = Math.floor(raw.length / 5);
	const sSet = new Uint32Array(nsamples);
	const sPath = new Uint32Array(nsamples);
	const sCount = new Float64Array(nsamples);
	const paths = []; // { frames, length }
	const pathIds = new Map();
	const droppedFrame = frame('[dropped]', '', KIND_USER);
	for (let i = 0; i < nsamples; i++) {
		const proc = frame(str(raw[5 * i]) || '[unknown]', '', KIND_PROCESS);
		const set = raw[5 * i + 1];
		const stack = raw[5 * i + 2];
		const st = stacks[stack] || stacks[0];
		const dropped = raw[5 * i + 4] && !st.length;
		const stackId = st === stacks[stack] ? stack : 0;
		const key = (proc.id * stacks.length + stackId) * 2 + (dropped ? 1 : 0);
		let p = pathIds.get(key);
		if (p === undefined) {
			p = paths.length;
			paths.push({ proc: proc, stack: st, srcs: stackSrcs[stackId],
				     extra: dropped ? droppedFrame : null });
			pathIds.set(key, p);
		}
		sSet[i] = Number.isInteger(set) && set >= 0 && set < sets.length ? set : 0;
		sPath[i] = p;
		sCount[i] = Math.max(Number(raw[5 * i + 3]) || 0, 0);
	}
	const root = frame('all', '', KIND_ROOT);

	/*
	 * Keys in the order of what they explain: the ones set on the most
	 * samples first; keys folded to KEY=* (a request id) and the process
	 * context's (one value per process, as its resource attributes) last.
	 */
	const foldedKeys = new Set(array(meta.folded).filter(Array.isArray).map(function (f) {
		return f[0];
	}));
	const processKeys = new Set(array(meta.process_keys));
	const carried = new Map();
	for (let i = 0; i < nsamples; i++)
		for (let j = 0; j < sets[sSet[i]].length; j += 2)
			carried.set(sets[sSet[i]][j], (carried.get(sets[sSet[i]][j]) || 0) + sCount[i]);
	function keyRank(k) {
		return processKeys.has(k) ? 2 : foldedKeys.has(k) ? 1 : 0;
	}
	keys.sort(function (a, b) {
		return keyRank(a) - keyRank(b) || (carried.get(b) || 0) - (carried.get(a) || 0) ||
			cmpText(str(a), str(b));
	});

	function pathLength(p) {
		return 1 + p.stack.length + (p.extra ? 1 : 0);
	}

	function frameAt(p, d) {
		return d === 0 ? p.proc : d <= p.stack.length ? p.stack[d - 1] : p.extra;
	}

	/* Siblings are drawn in name order: rank frames by name, then sort the paths by rank. */
	frames
		.slice()
		.sort(function (a, b) {
			const byName = cmpText(a.name, b.name) || a.kind - b.kind;
			return byName || cmpText(a.module, b.module);
		})
		.forEach(function (f, i) {
			f.rank = i;
		});
	const pathOrder = paths.map(function (p, i) {
		return i;
	});
	pathOrder.sort(function (a, b) {
		const pa = paths[a];
		const pb = paths[b];
		const n = Math.min(pathLength(pa), pathLength(pb));
		for (let d = 0; d < n; d++) {
			const r = frameAt(pa, d).rank - frameAt(pb, d).rank;
			if (r)
				return r;
		}
		return pathLength(pa) - pathLength(pb);
	});

	/* ---- filter ------------------------------------------------------------- */

	/*
	 * { key, values }: text as shown, a value null for "not set". A sample
	 * passes when it has one of the values of every key filtered.
	 */
	let filters = [];

	function filterToHash(fs) {
		const parts = [];
		for (const f of fs) {
			const k = encodeURIComponent(f.key);
			for (const v of f.values)
				parts.push(v === null ? k : k + '=' + encodeURIComponent(v));
		}
		return parts.join('&');
	}

	/* key=a&key=b: either value; keys combine with AND. */
	function filterFromHash(hash) {
		const byKey = new Map();
		for (const part of hash.replace(/^#/, '').split('&')) {
			if (!part)
				continue;
			const eq = part.indexOf('=');
			let key, value;
			try {
				key = decodeURIComponent(eq < 0 ? part : part.slice(0, eq));
				value = eq < 0 ? null : decodeURIComponent(part.slice(eq + 1));
			} catch (e) {
				continue; // not URI-encoded: ignored
			}
			if (!byKey.has(key))
				byKey.set(key, []);
			if (!byKey.get(key).includes(value))
				byKey.get(key).push(value);
		}
		return Array.from(byKey, function ([key, values]) {
			return { key: key, values: values };
		});
	}

	/* Which label sets pass every filter but the one on key skipKey (text). */
	function setsPassing(skipKey) {
		const pass = new Uint8Array(sets.length);
		const fs = filters
			.filter(function (f) {
				return f.key !== skipKey;
			})
			.map(function (f) {
				const k = keyId(f.key);
				return { k: k, vs: new Set(f.values.map(function (v) {
					return v === null ? -1 : valueId(k, v);
				})) };
			});
		for (let s = 0; s < sets.length; s++) {
			let ok = true;
			for (const f of fs)
				if (!f.vs.has(valueOf(sets[s], f.k))) {
					ok = false;
					break;
				}
			pass[s] = ok ? 1 : 0;
		}
		return pass;
	}

	/* ---- flame graph tree --------------------------------------------------- */

	/*
	 * Node i (0: the root): frame[i], value[i] samples, parent[i], and its
	 * subtree spans nodes i..end[i]-1; its first child is i+1, the next
	 * sibling of child c is end[c]. counts: the samples of each path.
	 */
	function buildTree(pass) {
		const counts = new Float64Array(paths.length);
		for (let i = 0; i < nsamples; i++)
			if (pass[sSet[i]])
				counts[sPath[i]] += sCount[i];
		let size = 1;
		for (let p = 0; p < paths.length; p++)
			if (counts[p])
				size += pathLength(paths[p]);
		const t = {
			frame: new Array(size),
			value: new Float64Array(size),
			parent: new Int32Array(size),
			end: new Int32Array(size),
			n: 1,
			counts: counts,
			sources: new Map(), // node -> sourcesOf's answer
		};
		t.frame[0] = root;
		t.parent[0] = -1;
		const open = [0]; // open[d]: the node at depth d of the previous path
		let prev = null;
		for (const p of pathOrder) {
			const c = counts[p];
			if (!c)
				continue;
			const path = paths[p];
			const len = pathLength(path);
			let same = 0; // frames shared with the previous path
			if (prev) {
				const n = Math.min(len, pathLength(prev));
				while (same < n && frameAt(path, same) === frameAt(prev, same))
					same++;
			}
			while (open.length > same + 1)
				t.end[open.pop()] = t.n;
			for (const i of open)
				t.value[i] += c;
			for (let d = same; d < len; d++) {
				const i = t.n++;
				t.frame[i] = frameAt(path, d);
				t.value[i] = c;
				t.parent[i] = open[open.length - 1];
				open.push(i);
			}
			prev = path;
		}
		while (open.length)
			t.end[open.pop()] = t.n;
		return t;
	}

	function children(t, i) {
		const out = [];
		for (let c = i + 1; c < t.end[i]; c = t.end[c])
			out.push(c);
		return out;
	}

	function pathOf(t, i) {
		const ids = [];
		for (; i > 0; i = t.parent[i])
			ids.unshift(t.frame[i].id);
		return ids;
	}

	/*
	 * Where node i's samples were in the source: [["file:line", samples]...],
	 * most first. A node merges the frames of one function at any line, so
	 * its paths are looked up (once per node) for the line at its depth.
	 */
	function sourcesOf(t, i) {
		if (t.sources.has(i))
			return t.sources.get(i);
		const ids = pathOf(t, i);
		const d = ids.length - 1; // the node's index in its paths' frames
		const bySource = new Map();
		for (let p = 0; p < paths.length && d > 0; p++) {
			const c = t.counts[p];
			const path = paths[p];
			if (!c || pathLength(path) <= d || d > path.stack.length)
				continue;
			let k = 0;
			while (k <= d && frameAt(path, k).id === ids[k])
				k++;
			const src = path.srcs[d - 1];
			if (k <= d || !src || (!str(src[0]) && !src[1]))
				continue;
			const text = (str(src[0]) || '?') + (src[1] ? ':' + src[1] : '');
			bySource.set(text, (bySource.get(text) || 0) + c);
		}
		const out = Array.from(bySource).sort(function (a, b) {
			return b[1] - a[1] || cmpText(a[0], b[0]);
		});
		t.sources.set(i, out);
		return out;
	}

	/* The deepest node along a path of frame ids (a zoom kept across filter changes). */
	function follow(t, ids) {
		let i = 0;
		for (const id of ids) {
			const c = children(t, i).find(function (c) {
				return t.frame[c].id === id;
			});
			if (c === undefined)
				break;
			i = c;
		}
		return i;
	}

	/* ---- drawing ------------------------------------------------------------ */

	const flame = byId('flame');
	const tooltip = byId('tooltip');
	const frameNodes = new WeakMap();
	let tree = null;
	let zoom = 0;
	let zoomPath = [];
	let search = '';

	function hash32(s) {
		let h = 2166136261;
		for (let i = 0; i < s.length; i++)
			h = Math.imul(h ^ s.charCodeAt(i), 16777619);
		return h >>> 0;
	}

	/* A colour per kind, varied by name so that neighbours differ. */
	function colour(f) {
		const h = hash32(f.name);
		const hue = (h % 1000) / 1000;
		const light = ((h >>> 10) % 100) / 100;
		switch (f.kind) {
		case KIND_KERNEL:
			return 'hsl(' + (200 + 25 * hue) + ',60%,' + (62 + 10 * light) + '%)';
		case KIND_PYTHON:
			return 'hsl(' + (250 + 25 * hue) + ',55%,' + (70 + 10 * light) + '%)';
		case KIND_JAVA:
			return 'hsl(' + (160 + 25 * hue) + ',50%,' + (60 + 10 * light) + '%)';
		case KIND_JS:
			return 'hsl(' + (56 + 10 * hue) + ',65%,' + (48 + 10 * light) + '%)';
		case KIND_INLINED:
			return 'hsl(' + (130 + 35 * hue) + ',45%,' + (55 + 12 * light) + '%)';
		case KIND_PROCESS:
		case KIND_ROOT:
			return 'hsl(0,0%,' + (70 + 8 * hue) + '%)';
		default:
			return 'hsl(' + (8 + 42 * hue) + ',82%,' + (58 + 12 * light) + '%)';
		}
	}

	function matches(f) {
		return search !== '' && f.kind !== KIND_ROOT &&
			f.name.toLowerCase().includes(search);
	}

	function drawFrame(i, depth, left, width, caller) {
		const f = tree.frame[i];
		const e = elem('div', 'frame k-' + KIND_NAMES[f.kind], f.name);
		const hit = matches(f);
		e.style.left = left * 100 + '%';
		e.style.width = width * 100 + '%';
		e.style.top = depth * ROW_PX + 'px';
		e.style.backgroundColor = hit ? 'hsl(292,62%,48%)' : colour(f);
		if (hit)
			e.classList.add('match');
		if (caller)
			e.classList.add('caller');
		frameNodes.set(e, i);
		return e;
	}

	/* Samples under frames that match the search, each counted once. */
	function matchedSamples(i) {
		let sum = 0;
		for (let j = i; j < tree.end[i];) {
			if (matches(tree.frame[j])) {
				sum += tree.value[j];
				j = tree.end[j];
			} else {
				j++;
			}
		}
		return sum;
	}

	function render() {
		const width = flame.clientWidth || 1000;
		const total = tree.value[0];
		const out = [];
		let depth = 0;
		tooltip.hidden = true;
		byId('reset-zoom').disabled = zoom === 0;
		if (!total) {
			flame.style.height = '';
			const why = nsamples ? 'No sample matches the filter.' :
				'The profile has no samples.';
			flame.replaceChildren(elem('div', 'empty', why));
			byId('match').textContent = '';
			return;
		}
		// The zoomed frame's callers, full width.
		const callers = [];
		for (let i = tree.parent[zoom]; i >= 0; i = tree.parent[i])
			callers.unshift(i);
		for (const i of callers)
			out.push(drawFrame(i, depth++, 0, 1, true));
		// The zoomed frame and its callees, row by row so the top rows survive the cap.
		let row = [{ i: zoom, left: 0, width: 1 }];
		while (row.length && out.length < MAX_FRAMES) {
			const next = [];
			for (const r of row) {
				if (out.length >= MAX_FRAMES)
					break;
				out.push(drawFrame(r.i, depth, r.left, r.width, false));
				let left = r.left;
				for (const c of children(tree, r.i)) {
					const w = (r.width * tree.value[c]) / tree.value[r.i];
					if (w * width >= MIN_FRAME_PX)
						next.push({ i: c, left: left, width: w });
					left += w;
				}
			}
			depth++;
			row = next;
		}
		flame.style.height = depth * ROW_PX + 'px';
		const frag = document.createDocumentFragment();
		for (const e of out)
			frag.append(e);
		flame.replaceChildren(frag);
		if (search) {
			const m = matchedSamples(zoom);
			byId('match').textContent =
				'Matched: ' + fmtInt(m) + ' samples, ' + fmtPct(m, total);
		} else {
			byId('match').textContent = '';
		}
	}

	function showTooltip(i, x, y) {
		const f = tree.frame[i];
		const total = tree.value[0];
		let self = tree.value[i];
		for (const c of children(tree, i))
			self -= tree.value[c];
		const rows = [['kind', KIND_NAMES[f.kind]]];
		if (f.module)
			rows.push(['module', f.module]);
		const value = tree.value[i];
		const sources = sourcesOf(tree, i);
		for (const [text, n] of sources.slice(0, 3)) {
			const share = sources.length > 1 ? ' (' + fmtPct(n, value) + ')' : '';
			rows.push(['source', text + share]);
		}
		if (sources.length > 3)
			rows.push(['source', sources.length - 3 + ' more lines']);
		rows.push(['samples', fmtInt(value) + ' (' + fmtPct(value, total) + ' of shown)']);
		if (zoom && i !== 0)
			rows.push(['of zoomed', fmtPct(tree.value[i], tree.value[zoom])]);
		rows.push(['self', fmtInt(self) + ' (' + fmtPct(self, total) + ')']);
		if (meta.period_ns)
			rows.push(['CPU time', fmtDuration(tree.value[i] * meta.period_ns)]);
		const parts = [elem('div', 'name', f.name)];
		for (const [k, v] of rows)
			parts.push(elem('div', 'row', k + ': ' + v));
		tooltip.replaceChildren(...parts);
		tooltip.hidden = false;
		const r = tooltip.getBoundingClientRect();
		const left = Math.min(x + 14, window.innerWidth - r.width - 4);
		const top = y + 18 + r.height > window.innerHeight ? y - r.height - 8 : y + 18;
		tooltip.style.left = Math.max(left, 0) + 'px';
		tooltip.style.top = Math.max(top, 0) + 'px';
	}

	function nodeOf(ev) {
		const i = ev.target instanceof Element ? frameNodes.get(ev.target) : undefined;
		return i === undefined ? -1 : i;
	}

	flame.addEventListener('mousemove', function (ev) {
		const i = nodeOf(ev);
		if (i >= 0)
			showTooltip(i, ev.clientX, ev.clientY);
		else
			tooltip.hidden = true;
	});
	flame.addEventListener('mouseleave', function () {
		tooltip.hidden = true;
	});
	flame.addEventListener('click', function (ev) {
		const i = nodeOf(ev);
		if (i < 0)
			return;
		zoom = i;
		zoomPath = pathOf(tree, i);
		render();
	});
	byId('reset-zoom').addEventListener('click', function () {
		zoom = 0;
		zoomPath = [];
		render();
	});
	byId('search').addEventListener('input', function (ev) {
		search = ev.target.value.trim().toLowerCase();
		render();
	});
	let resizeTimer = 0;
	window.addEventListener('resize', function () {
		clearTimeout(resizeTimer);
		resizeTimer = setTimeout(render, 100);
	});

	/* ---- header ------------------------------------------------------------- */

	function drawTotals() {
		const samples = meta.samples || 0;
		const items = [
			['Samples', fmtInt(samples)],
			['CPU time', meta.period_ns ? fmtDuration(samples * meta.period_ns) : '?'],
			['Duration', meta.duration_ns ? fmtDuration(meta.duration_ns) : '?'],
			['Frequency', meta.frequency_hz ? fmtInt(meta.frequency_hz) + ' Hz' : '?'],
			['Drops', fmtInt(meta.ringbuf_drops || 0), meta.ringbuf_drops > 0],
			['Processes', fmtInt(meta.processes || 0)],
		];
		if (meta.samples_dropped) {
			const dropped = fmtInt(meta.samples_dropped);
			items.push(['Samples without stack (memory limit)', dropped, true]);
		}
		/* keys with too many values to list, shown as KEY=* */
		const folded = array(meta.folded).filter(Array.isArray).map(function (f) {
			return str(f[0]) + ' (' + fmtInt(f[1] || 0) + ' values, over ' + fmtInt(f[2] || 0) +
				') shown as ' + str(f[0]) + '=*';
		});
		if (folded.length)
			items.push(['Folded', folded.join(', ')]);
		if (meta.start_ms) {
			const iso = new Date(meta.start_ms).toISOString();
			items.push(['Started', iso.replace('T', ' ').replace(/\.\d+Z$/, ' UTC')]);
		}
		const dl = byId('totals');
		for (const [name, value, warn] of items) {
			const d = elem('div');
			d.id = 'total-' + name.split(' ')[0].toLowerCase();
			d.append(elem('dt', '', name), elem('dd', warn ? 'warn' : '', value));
			dl.append(d);
		}
		if (meta.host)
			byId('host').textContent = str(meta.host);
	}

	/* ---- label tables and filter bar ---------------------------------------- */

	function activeFilter(key) {
		return filters.find(function (f) {
			return f.key === key;
		});
	}

	function isActive(key, value) {
		const cur = activeFilter(key);
		return cur !== undefined && cur.values.includes(value);
	}

	/*
	 * A click: only value of key (null: not set), or no filter on key when
	 * it was the only one. add (Ctrl or Shift held, or the row's box): the
	 * value joins the key's others, or leaves them.
	 */
	function setFilter(key, value, add) {
		const cur = activeFilter(key);
		const rest = filters.filter(function (f) {
			return f.key !== key;
		});
		let values = [value];
		if (add && cur)
			values = cur.values.includes(value) ? cur.values.filter(function (v) {
				return v !== value;
			}) : cur.values.concat([value]);
		else if (cur && cur.values.length === 1 && cur.values[0] === value)
			values = [];
		if (values.length)
			rest.push({ key: key, values: values });
		filters = rest;
		applyFilters(true);
	}

	function labelRow(key, value, text, count, total, className, clickable) {
		const tr = elem('tr', clickable ? 'label-row' : '');
		tr.dataset.samples = String(count);
		const bar = elem('span', 'bar');
		bar.style.width = (total ? (3 * count) / total : 0) + 'em';
		const share = elem('td', 'share');
		share.append(bar, elem('span', 'pct', fmtPct(count, total)));
		const td = elem('td', 'value' + (className ? ' ' + className : ''), text);
		const pick = elem('td', 'pick');
		tr.append(pick, td, elem('td', 'samples', fmtInt(count)), share);
		if (!clickable)
			return tr;
		const active = isActive(key, value);
		if (active)
			tr.classList.add('active');
		/* the box adds the value to the key's others: several values of one key */
		const box = elem('input');
		box.type = 'checkbox';
		box.checked = active;
		box.title = 'Also show this value (Ctrl-click a row does the same)';
		box.setAttribute('aria-label', 'Also show ' + key + ' ' + text);
		box.addEventListener('click', function (ev) {
			ev.stopPropagation();
			setFilter(key, value, true);
		});
		pick.append(box);
		tr.tabIndex = 0;
		tr.setAttribute('role', 'button');
		tr.setAttribute('aria-pressed', String(active));
		tr.addEventListener('click', function (ev) {
			setFilter(key, value, ev.ctrlKey || ev.metaKey || ev.shiftKey);
		});
		tr.addEventListener('keydown', function (ev) {
			if (ev.key === 'Enter' || ev.key === ' ') {
				ev.preventDefault();
				setFilter(key, value, ev.ctrlKey || ev.metaKey || ev.shiftKey);
			}
		});
		return tr;
	}

	/* Keys whose table lists every value: its "more values" row was clicked. */
	const expandedKeys = new Set();

	/* The "N more values" row (expand) or the row that folds them again. */
	function moreRow(key, text, count, total, expand) {
		const tr = labelRow(key, null, text, count, total, 'more', false);
		tr.classList.add('more-row');
		tr.tabIndex = 0;
		tr.setAttribute('role', 'button');
		tr.setAttribute('aria-expanded', String(!expand));
		tr.title = expand ? 'Show every value' : 'Show the top ' + TOP_VALUES + ' values only';
		function toggle() {
			if (expand)
				expandedKeys.add(key);
			else
				expandedKeys.delete(key);
			drawLabelTables();
		}
		tr.addEventListener('click', toggle);
		tr.addEventListener('keydown', function (ev) {
			if (ev.key === 'Enter' || ev.key === ' ') {
				ev.preventDefault();
				toggle();
			}
		});
		return tr;
	}

	/*
	 * The TOP_VALUES values with the most samples, most first (and the
	 * values of the active filter, texts active, wherever they rank): with a
	 * short sorted list, as keys like request ids have a value per sample.
	 */
	function topValues(byValue, active) {
		const top = [];
		const extra = [];
		for (const e of byValue) {
			if (active.includes(str(e[0])))
				extra.push(e);
			if (top.length === TOP_VALUES && e[1] <= top[TOP_VALUES - 1][1])
				continue;
			let i = top.length;
			while (i > 0 && top[i - 1][1] < e[1])
				i--;
			top.splice(i, 0, e);
			top.length = Math.min(top.length, TOP_VALUES);
		}
		top.sort(function (a, b) {
			return b[1] - a[1] || cmpText(str(a[0]), str(b[0]));
		});
		for (const e of extra)
			if (!top.includes(e))
				top.push(e);
		return top;
	}

	/*
	 * Whether a key's table is open: what the user chose, else open but for
	 * folded keys and the process context's, which say little per value.
	 */
	const openKeys = new Map();
	function isOpen(k) {
		return openKeys.has(k) ? openKeys.get(k) : !keyRank(k) || !!activeFilter(str(k));
	}

	/* Per key, the samples of each value among those that pass the other keys' filters. */
	function drawLabelTables() {
		const setCounts = new Float64Array(sets.length);
		for (let i = 0; i < nsamples; i++)
			setCounts[sSet[i]] += sCount[i];
		const parts = [];
		for (const k of keys) {
			const key = str(k);
			const pass = setsPassing(key);
			const byValue = new Map();
			let total = 0;
			let unset = 0;
			for (let s = 0; s < sets.length; s++) {
				const c = setCounts[s];
				if (!pass[s] || !c)
					continue;
				const v = valueOf(sets[s], k);
				total += c;
				if (v < 0)
					unset += c;
				else
					byValue.set(v, (byValue.get(v) || 0) + c);
			}
			const cur = activeFilter(key);
			const top = topValues(byValue, cur ? cur.values : []);
			const expanded = expandedKeys.has(key) && top.length < byValue.size;
			const values = !expanded ? top : Array.from(byValue).sort(function (a, b) {
				return b[1] - a[1] || cmpText(str(a[0]), str(b[0]));
			});
			const section = elem('div', 'label-key');
			const h = elem('h3');
			const n = byValue.size + (byValue.size === 1 ? ' value, ' : ' values, ');
			const of = elem('span', 'of', '  ' + n + fmtInt(total) + ' samples');
			const open = isOpen(k);
			const fold = elem('button', 'fold', open ? '▾' : '▸');
			fold.type = 'button';
			fold.title = open ? 'Collapse' : 'Expand';
			fold.setAttribute('aria-expanded', String(open));
			fold.setAttribute('aria-label', (open ? 'Collapse ' : 'Expand ') + key);
			fold.addEventListener('click', function () {
				openKeys.set(k, !open);
				drawLabelTables();
			});
			h.append(fold, elem('span', 'key', key), of);
			if (processKeys.has(k))
				h.append(elem('span', 'of', '  (describes a process)'));
			if (!open) {
				section.classList.add('collapsed');
				section.append(h);
				parts.push(section);
				continue;
			}
			const head = elem('tr');
			head.append(elem('th', 'pick', ''), elem('th', '', 'value'), elem('th', 'num', 'samples'));
			head.append(elem('th', 'share', 'share'));
			const thead = elem('thead');
			thead.append(head);
			const body = elem('tbody');
			for (const [v, c] of values) {
				const text = str(v);
				body.append(labelRow(key, text, text, c, total, '', true));
			}
			let rest = total - unset;
			for (const [, c] of top)
				rest -= c;
			const restCount = byValue.size - top.length;
			if (restCount && !expanded)
				body.append(moreRow(key, restCount + ' more values', rest, total, true));
			else if (expanded)
				body.append(moreRow(key, 'fold the ' + restCount + ' values past the top ' +
					TOP_VALUES, rest, total, false));
			if (unset || isActive(key, null)) {
				const row = labelRow(key, null, UNSET, unset, total, 'unset', true);
				body.append(row);
			}
			const table = elem('table');
			table.append(thead, body);
			section.append(h, table);
			parts.push(section);
		}
		if (!keys.length)
			parts.push(elem('p', 'empty', 'No sample carries labels.'));
		byId('label-tables').replaceChildren(...parts);
	}

	function drawFilterBar() {
		const chips = filters.map(function (f) {
			const text = f.key + (f.values.length === 1 && f.values[0] === null ? ' not set'
				: ' = ' + f.values.map(function (v) {
					return v === null ? UNSET : v;
				}).join(' or '));
			const chip = elem('span', 'chip', text);
			const x = elem('button', '', '×');
			x.type = 'button';
			x.title = 'Remove this filter';
			x.setAttribute('aria-label', 'Remove the filter on ' + f.key);
			x.addEventListener('click', function () {
				filters = filters.filter(function (g) {
					return g !== f;
				});
				applyFilters(true);
			});
			chip.append(x);
			return chip;
		});
		byId('filters').replaceChildren(...chips);
		byId('nofilter').hidden = filters.length > 0;
		byId('clear-filters').disabled = !filters.length;
	}

	function drawShown() {
		const shown = tree.value[0];
		const all = meta.samples || shown;
		byId('shown').dataset.samples = String(shown);
		byId('shown').textContent = filters.length
			? 'Showing the ' + fmtInt(shown) + ' of ' + fmtInt(all) + ' samples (' +
				fmtPct(shown, all) + ') that match the filter'
			: 'Showing all ' + fmtInt(shown) + ' samples';
	}

	/* ---- function table ------------------------------------------------------ */

	const TOP_FUNCTIONS = 30; // rows of the table
	const TOP_NEIGHBOURS = 10; // callers and callees of the chosen function
	let fnSort = 'total';
	let fnChosen = null; // a frame

	/*
	 * Per function frame, over the samples shown: self (the leaf), total (in
	 * the stack, once however often it recurses), callers and callees (each
	 * counted once per stack).
	 */
	function functionStats() {
		const stats = new Map();
		function statOf(f) {
			let st = stats.get(f);
			if (!st) {
				st = { frame: f, self: 0, total: 0, callers: new Map(), callees: new Map() };
				stats.set(f, st);
			}
			return st;
		}
		for (let p = 0; p < paths.length; p++) {
			const c = tree.counts[p];
			const path = paths[p];
			if (!c || !path.stack.length)
				continue;
			const len = 1 + path.stack.length;
			const seen = new Set();
			const pairs = new Set();
			for (let d = 1; d < len; d++) {
				const f = frameAt(path, d);
				const st = statOf(f);
				if (!seen.has(f)) {
					seen.add(f);
					st.total += c;
				}
				if (d === len - 1)
					st.self += c;
				const caller = frameAt(path, d - 1);
				if (!pairs.has(caller.id + ',' + f.id)) {
					pairs.add(caller.id + ',' + f.id);
					st.callers.set(caller, (st.callers.get(caller) || 0) + c);
					if (caller.kind !== KIND_PROCESS)
						statOf(caller).callees.set(f, (statOf(caller).callees.get(f) || 0) + c);
				}
			}
		}
		return stats;
	}

	function fnCmp(a, b) {
		if (fnSort === 'name')
			return cmpText(a.frame.name, b.frame.name) || b.total - a.total;
		return b[fnSort] - a[fnSort] || cmpText(a.frame.name, b.frame.name);
	}

	function fnRow(f, cells, className) {
		const tr = elem('tr', 'fn-row' + (className ? ' ' + className : ''));
		const name = elem('td', 'fn k-' + KIND_NAMES[f.kind], f.name);
		name.title = f.name + ' (' + KIND_NAMES[f.kind] + (f.module ? ', ' + f.module : '') + ')';
		tr.append(name, ...cells);
		tr.tabIndex = 0;
		tr.setAttribute('role', 'button');
		function choose() {
			fnChosen = fnChosen === f ? null : f;
			drawFunctions();
		}
		tr.addEventListener('click', choose);
		tr.addEventListener('keydown', function (ev) {
			if (ev.key === 'Enter' || ev.key === ' ') {
				ev.preventDefault();
				choose();
			}
		});
		return tr;
	}

	function neighbours(title, byFrame, total) {
		const table = elem('table', 'fn-table neighbours');
		const cap = elem('caption', '', title);
		const head = elem('tr');
		head.append(elem('th', '', 'function'), elem('th', 'num', 'samples'),
			elem('th', 'share', 'share'));
		const body = elem('tbody');
		const rows = Array.from(byFrame).sort(function (a, b) {
			return b[1] - a[1] || cmpText(a[0].name, b[0].name);
		});
		for (const [f, c] of rows.slice(0, TOP_NEIGHBOURS)) {
			const tr = f.kind === KIND_PROCESS ? elem('tr') : fnRow(f, [], '');
			if (f.kind === KIND_PROCESS)
				tr.append(elem('td', 'fn k-process', f.name));
			tr.append(elem('td', 'samples', fmtInt(c)), elem('td', 'pct', fmtPct(c, total)));
			body.append(tr);
		}
		if (!rows.length) {
			const none = elem('tr', 'empty');
			none.append(elem('td', '', 'none'));
			body.append(none);
		}
		table.append(cap, elem('thead'), body);
		table.tHead.append(head);
		return table;
	}

	function drawFunctions() {
		const stats = functionStats();
		const all = Array.from(stats.values()).sort(fnCmp);
		const shown = tree.value[0];
		const table = elem('table', 'fn-table');
		const head = elem('tr');
		for (const [col, text, cls] of [['name', 'function', ''], ['self', 'self', 'num'],
			['total', 'total', 'num']]) {
			const th = elem('th', cls + (fnSort === col ? ' sorted' : ''), text);
			th.dataset.sort = col;
			th.tabIndex = 0;
			th.title = 'Sort by ' + text;
			th.addEventListener('click', function () {
				fnSort = col;
				drawFunctions();
			});
			head.append(th);
		}
		const body = elem('tbody');
		for (const st of all.slice(0, TOP_FUNCTIONS)) {
			const tr = fnRow(st.frame, [
				elem('td', 'self', fmtInt(st.self) + ' (' + fmtPct(st.self, shown) + ')'),
				elem('td', 'total', fmtInt(st.total) + ' (' + fmtPct(st.total, shown) + ')'),
			], st.frame === fnChosen ? 'active' : '');
			tr.dataset.self = String(st.self);
			tr.dataset.total = String(st.total);
			body.append(tr);
		}
		table.append(elem('thead'), body);
		table.tHead.append(head);
		const parts = [table];
		if (all.length > TOP_FUNCTIONS)
			parts.push(elem('p', 'hint', (all.length - TOP_FUNCTIONS) + ' more functions'));
		const chosen = fnChosen && stats.get(fnChosen);
		if (chosen) {
			const box = elem('div', 'fn-detail');
			box.id = 'fn-detail';
			box.append(elem('h3', '', chosen.frame.name),
				neighbours('Callers', chosen.callers, chosen.total),
				neighbours('Callees', chosen.callees, chosen.total));
			parts.push(box);
		}
		byId('functions').replaceChildren(...parts);
	}

	function applyFilters(toHash) {
		if (toHash) {
			const h = filterToHash(filters);
			if (location.hash.replace(/^#/, '') !== h)
				location.hash = h;
		}
		tree = buildTree(setsPassing(null));
		zoom = follow(tree, zoomPath);
		drawFilterBar();
		drawLabelTables();
		drawShown();
		drawFunctions();
		render();
	}

	byId('clear-filters').addEventListener('click', function () {
		filters = [];
		applyFilters(true);
	});
	window.addEventListener('hashchange', function () {
		const h = location.hash.replace(/^#/, '');
		if (h === filterToHash(filters))
			return;
		filters = filterFromHash(h);
		applyFilters(false);
	});

	drawTotals();
	filters = filterFromHash(location.hash);
	applyFilters(false);
})();
