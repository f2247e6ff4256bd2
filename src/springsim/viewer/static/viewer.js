// springsim's live viewer: the front end of springsim.view() (an anywidget ES module).
// Plain Canvas 2D drawing of our own: nothing is fetched, no library is loaded.
// Python sends "scene" (topology, colliders, contact radii: shapes.js draws the collider
// triangles and the radii), "frame" (float32 positions, uint8 pins, float32
// spring values, int32 contact pairs) and "state" (controls) messages; this module sends back the user's
// actions (play, pause, step, reset, set, slider, grab, drag, release, pin). Frames are
// not acknowledged (each message to the kernel blinks it busy): the kernel sends at most
// fps a second, and this module says "hold" only when it falls behind, "resume" once it
// has caught up, and "alive" after ALIVE_EVERY s of silence while frames come (the
// kernel stops a viewer whose page is gone: protocol.ALIVE_TIMEOUT). See watchLag.
//
// Projection (what tests/test_viewer_browser.py recomputes independently), in CSS px
// of the main canvas, width W and height H:
//   2D: sx = W/2 + scale (x - cx), sy = H/2 - scale (y - cy).
//   3D: r = p - target; yaw about y, then pitch about x:
//       x1 = cos(yaw) rx + sin(yaw) rz, z1 = -sin(yaw) rx + cos(yaw) rz, y1 = ry,
//       y2 = cos(pitch) y1 - sin(pitch) z1, z2 = sin(pitch) y1 + cos(pitch) z1;
//       the eye sits at z2 = distance looking along -z2, depth d = distance - z2,
//       f = (H/2) / tan(fov/2), sx = W/2 + f x1 / d, sy = H/2 - f y2 / d.

const NODE = "#1f4e9c";
const PIN = "#d62728";
// a line between the two nodes of each pair touching (the trace's "contact" colour)
const CONTACT = "#e377c2";
const TERMS = [
  ["kinetic", "#1f77b4"], ["elastic", "#2ca02c"], ["gravity", "#9467bd"],
  ["pressure", "#8c564b"], ["contact", "#e377c2"], ["total", "#111111"], ["books", "#ff7f0e"],
];
const HISTORY = 2000; // protocol.TRACE_LENGTH
// color_by "body": body k in TAB10[k % 10], matplotlib's tab10 (the plots' colours)
const TAB10 = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
               "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"];
// The lag rule (protocol.HOLD_LAG, RESUME_LAG, ALIVE_EVERY), in seconds: a frame's lag is
// (this clock when it is processed - its "sent", the kernel's clock) minus the smallest
// such difference seen (the clocks' offset and the quickest delivery cancel).
const HOLD_LAG = 0.25, RESUME_LAG = 0.1, ALIVE_EVERY = 10, DRAINED = 0.1;
const clock = () => (performance.timeOrigin + performance.now()) / 1000;

function typed(view, Type) {
  const v = view instanceof DataView ? view : new DataView(view.buffer || view);
  return new Type(v.buffer.slice(v.byteOffset, v.byteOffset + v.byteLength));
}

function element(tag, attrs, parent, text) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  if (parent) parent.appendChild(e);
  return e;
}

// Blue (compressed) - grey (unstrained) - red (stretched), t in [-1, 1]: the middle is
// a grey that shows on the white background, so an unstrained cloth is seen.
const NEUTRAL = 150;
function diverging(t) {
  const a = Math.min(1, Math.abs(t));
  const n = Math.round(NEUTRAL * (1 - a)), e = Math.round(NEUTRAL + (255 - NEUTRAL) * a);
  return t < 0 ? `rgb(${n},${n},${e})` : `rgb(${e},${n},${n})`;
}

function makeCamera() {
  return { yaw: 0.6, pitch: 0.35, distance: 3, target: [0, 0, 0], fov: Math.PI / 4,
           scale: 100, center: [0, 0], fitted: false, user: false };
}

function project(cam, dim, W, H, x, y, z) {
  if (dim === 2) return [W / 2 + cam.scale * (x - cam.center[0]),
                         H / 2 - cam.scale * (y - cam.center[1]), 0];
  const rx = x - cam.target[0], ry = y - cam.target[1], rz = z - cam.target[2];
  const cy = Math.cos(cam.yaw), sy = Math.sin(cam.yaw);
  const cp = Math.cos(cam.pitch), sp = Math.sin(cam.pitch);
  const x1 = cy * rx + sy * rz, z1 = -sy * rx + cy * rz;
  const y2 = cp * ry - sp * z1, z2 = sp * ry + cp * z1;
  const d = Math.max(1e-6, cam.distance - z2);
  const f = H / 2 / Math.tan(cam.fov / 2);
  return [W / 2 + (f * x1) / d, H / 2 - (f * y2) / d, d];
}

// The world point under screen point (sx, sy) at camera depth d (3D) or in the plane.
function unproject(cam, dim, W, H, sx, sy, d) {
  if (dim === 2) return [cam.center[0] + (sx - W / 2) / cam.scale,
                         cam.center[1] - (sy - H / 2) / cam.scale];
  const f = H / 2 / Math.tan(cam.fov / 2);
  const x1 = ((sx - W / 2) * d) / f, y2 = (-(sy - H / 2) * d) / f, z2 = cam.distance - d;
  const cp = Math.cos(cam.pitch), sp = Math.sin(cam.pitch);
  const ry = cp * y2 + sp * z2, z1 = -sp * y2 + cp * z2;
  const cw = Math.cos(cam.yaw), sw = Math.sin(cam.yaw);
  const rx = cw * x1 - sw * z1, rz = sw * x1 + cw * z1;
  return [rx + cam.target[0], ry + cam.target[1], rz + cam.target[2]];
}

// Frame the nodes and colliders (and, when widening, the view so far: never zoom in).
function fit(cam, S, W, H, widen) {
  const n = S.nodes, dim = S.dim, lo = [Infinity, Infinity, Infinity];
  const hi = [-Infinity, -Infinity, -Infinity];
  if (widen && dim === 2)
    for (const [sx, sy] of [[0, 0], [W, H]]) {
      const p = unproject(cam, 2, W, H, sx, sy, 0);
      for (let k = 0; k < 2; k++) { lo[k] = Math.min(lo[k], p[k]); hi[k] = Math.max(hi[k], p[k]); }
    }
  for (let i = 0; i < n; i++)
    for (let k = 0; k < dim; k++) {
      const v = S.pos[i * dim + k];
      if (v < lo[k]) lo[k] = v;
      if (v > hi[k]) hi[k] = v;
    }
  // the box of every collider (protocol.collider_bounds: spheres, boxes, capsules,
  // meshes, and each plane's point nearest the nodes' centre)
  if (S.bounds) for (let k = 0; k < dim; k++) {
    lo[k] = Math.min(lo[k], S.bounds[0][k]);
    hi[k] = Math.max(hi[k], S.bounds[1][k]);
  }
  if (!(n > 0) || !isFinite(lo[0])) return;
  const mid = lo.map((l, k) => (k < dim ? (l + hi[k]) / 2 : 0));
  const span = Math.max(1e-3, ...lo.slice(0, dim).map((l, k) => hi[k] - l));
  if (dim === 2) {
    cam.center = [mid[0], mid[1]];
    const sx = hi[0] - lo[0], sy = hi[1] - lo[1];
    cam.scale = 0.8 * Math.min(W / Math.max(sx, 1e-3), H / Math.max(sy, 1e-3));
  } else {
    const old = cam.distance;
    cam.target = mid;
    cam.distance = (0.75 * span) / Math.sin(cam.fov / 2) + 0.5 * span;
    if (widen) cam.distance = Math.max(1.25 * old, cam.distance);
  }
  cam.fitted = true;
}

function drawColliders(ctx, cam, S, W, H, P) {
  const dim = S.dim;
  for (const c of S.colliders) {
    const v = c.slice(1, 1 + dim), s = c[1 + dim];
    if (c[0] === 1) { // sphere (circle in 2D): centre v, radius s
      const p = P(...v, 0);
      const r = dim === 2 ? s * cam.scale : (s * (H / 2)) / Math.tan(cam.fov / 2) / p[2];
      const g = ctx.createRadialGradient(p[0] - r / 3, p[1] - r / 3, r / 10, p[0], p[1], r);
      g.addColorStop(0, "#e8e8e8");
      g.addColorStop(1, "#8a8a8a");
      ctx.fillStyle = g;
      ctx.beginPath();
      ctx.arc(p[0], p[1], Math.max(1, r), 0, 2 * Math.PI);
      ctx.fill();
    } else if (dim === 2) { // plane n . x = offset: the line, and the solid side shaded
      const n = v, o = s, big = 4 * (W + H) / cam.scale;
      const base = [n[0] * o, n[1] * o], t = [-n[1], n[0]];
      const pts = [[1, 0], [-1, 0], [-1, -1], [1, -1]].map(([a, b]) => P(
        base[0] + big * (a * t[0] + b * n[0]), base[1] + big * (a * t[1] + b * n[1]), 0));
      ctx.fillStyle = "rgba(120,120,120,0.25)";
      ctx.beginPath();
      pts.forEach((p, i) => (i ? ctx.lineTo(p[0], p[1]) : ctx.moveTo(p[0], p[1])));
      ctx.fill();
    } else { // a square patch of the plane around the point nearest the view's centre
      const n = v, t0 = cam.target;
      const k = n[0] * t0[0] + n[1] * t0[1] + n[2] * t0[2] - s;
      const base = [t0[0] - k * n[0], t0[1] - k * n[1], t0[2] - k * n[2]];
      const a = Math.abs(n[0]) < 0.9 ? [1, 0, 0] : [0, 1, 0];
      const u = [n[1] * a[2] - n[2] * a[1], n[2] * a[0] - n[0] * a[2], n[0] * a[1] - n[1] * a[0]];
      const un = Math.hypot(...u);
      const e1 = u.map((x) => x / un);
      const e2 = [n[1] * e1[2] - n[2] * e1[1], n[2] * e1[0] - n[0] * e1[2], n[0] * e1[1] - n[1] * e1[0]];
      const h = 0.6 * cam.distance;
      const pts = [[1, 1], [-1, 1], [-1, -1], [1, -1]].map(([p, q]) =>
        P(...[0, 1, 2].map((i) => base[i] + h * (p * e1[i] + q * e2[i]))));
      ctx.fillStyle = "rgba(150,150,150,0.3)";
      ctx.strokeStyle = "rgba(90,90,90,0.6)";
      ctx.beginPath();
      pts.forEach((p, i) => (i ? ctx.lineTo(p[0], p[1]) : ctx.moveTo(p[0], p[1])));
      ctx.closePath();
      ctx.fill();
      ctx.stroke();
    }
  }
}

// Faces, far to near (painter's order), lit by a light at the eye: brightness
// 0.35 + 0.65 |n . l|, two-sided (a cloth is seen from both sides), in 32 levels.
const SHADES = Array.from({ length: 32 }, (_, k) => {
  const s = 0.35 + (0.65 * k) / 31;
  return `rgb(${Math.round(60 + 120 * s)},${Math.round(110 + 130 * s)},${Math.round(200 * s + 40)})`;
});

function drawFaces(ctx, S, xs, ys, ds, cam) {
  const F = S.faces, m = F.length / 3, dim = S.dim, p = S.pos;
  if (!m) return;
  const order = new Uint32Array(m), depth = new Float32Array(m), level = new Uint8Array(m);
  const eye = unproject(cam, 3, 2, 2, 1, 1, 0);
  const ex = eye[0] - cam.target[0], ey = eye[1] - cam.target[1], ez = eye[2] - cam.target[2];
  const en = Math.hypot(ex, ey, ez) || 1;
  for (let i = 0; i < m; i++) {
    const a = F[3 * i], b = F[3 * i + 1], c = F[3 * i + 2];
    order[i] = i;
    depth[i] = ds[a] + ds[b] + ds[c];
    if (dim !== 3) { level[i] = 24; continue; }
    const ux = p[3 * b] - p[3 * a], uy = p[3 * b + 1] - p[3 * a + 1], uz = p[3 * b + 2] - p[3 * a + 2];
    const wx = p[3 * c] - p[3 * a], wy = p[3 * c + 1] - p[3 * a + 1], wz = p[3 * c + 2] - p[3 * a + 2];
    const nx = uy * wz - uz * wy, ny = uz * wx - ux * wz, nz = ux * wy - uy * wx;
    const cos = Math.abs(nx * ex + ny * ey + nz * ez) / ((Math.hypot(nx, ny, nz) || 1) * en);
    level[i] = Math.round(31 * cos);
  }
  if (dim === 3) order.sort((a, b) => depth[b] - depth[a]);
  // stroking each face too closes the hairline gaps between neighbours, but doubles
  // the cost: done for up to 4000 faces (a 100 x 100 cloth has 19602)
  const seams = m <= 4000;
  let current = -1;
  for (let j = 0; j < m; j++) {
    const i = order[j], a = F[3 * i], b = F[3 * i + 1], c = F[3 * i + 2];
    if (level[i] !== current) { current = level[i]; ctx.fillStyle = ctx.strokeStyle = SHADES[current]; }
    ctx.beginPath();
    ctx.moveTo(xs[a], ys[a]);
    ctx.lineTo(xs[b], ys[b]);
    ctx.lineTo(xs[c], ys[c]);
    ctx.closePath();
    ctx.fill();
    if (seams) ctx.stroke();
  }
}

// Each node's body label, from the springs' (color_by "body": a spring's value is the
// label of its nodes); -1 for a node no spring joins (drawn in the plain colour).
function nodeBodies(S) {
  const labels = new Int32Array(S.nodes).fill(-1), E = S.springs;
  for (let i = 0; i < E.length / 2; i++) labels[E[2 * i]] = labels[E[2 * i + 1]] = S.values[i];
  return labels;
}

function drawSprings(ctx, S, xs, ys) {
  const E = S.springs, m = E.length / 2;
  if (S.values && S.colorBy === "body") {
    const paths = TAB10.map(() => new Path2D());
    for (let i = 0; i < m; i++) {
      const k = S.values[i];
      if (!(k >= 0)) continue;
      paths[k % TAB10.length].moveTo(xs[E[2 * i]], ys[E[2 * i]]);
      paths[k % TAB10.length].lineTo(xs[E[2 * i + 1]], ys[E[2 * i + 1]]);
    }
    ctx.lineWidth = 2;
    paths.forEach((path, k) => { ctx.strokeStyle = TAB10[k]; ctx.stroke(path); });
    ctx.lineWidth = 1;
    return;
  }
  if (S.values && S.range) {
    // the scale [lo, hi] of the frame (protocol.color_range): lo blue, hi red, in 21
    // levels, k = round(clip((v - lo) / (hi - lo)) (levels - 1)) (protocol.color_index)
    const buckets = 21, paths = Array.from({ length: buckets }, () => new Path2D());
    const [lo, hi] = S.range, width = hi - lo || 1;
    for (let i = 0; i < m; i++) {
      const v = S.values[i];
      if (!isFinite(v)) continue;
      const k = Math.round(Math.min(1, Math.max(0, (v - lo) / width)) * (buckets - 1));
      paths[k].moveTo(xs[E[2 * i]], ys[E[2 * i]]);
      paths[k].lineTo(xs[E[2 * i + 1]], ys[E[2 * i + 1]]);
    }
    ctx.lineWidth = 2;
    paths.forEach((path, k) => {
      ctx.strokeStyle = diverging((2 * k) / (buckets - 1) - 1);
      ctx.stroke(path);
    });
    ctx.lineWidth = 1;
    return;
  }
  ctx.strokeStyle = "rgba(60,60,60,0.8)";
  ctx.beginPath();
  for (let i = 0; i < m; i++) {
    ctx.moveTo(xs[E[2 * i]], ys[E[2 * i]]);
    ctx.lineTo(xs[E[2 * i + 1]], ys[E[2 * i + 1]]);
  }
  ctx.stroke();
}

// The node pairs touching now (protocol.frame's int32 pairs, i < j): a 3 px line
// between the two nodes' centres as projected.
function drawContacts(ctx, S, xs, ys) {
  const C = S.contacts;
  if (!C || !C.length) return;
  ctx.strokeStyle = CONTACT;
  ctx.lineWidth = 3;
  ctx.beginPath();
  for (let k = 0; k < C.length / 2; k++) {
    const i = C[2 * k], j = C[2 * k + 1];
    if (!(i < S.nodes && j < S.nodes)) continue; // a frame of an older scene
    ctx.moveTo(xs[i], ys[i]);
    ctx.lineTo(xs[j], ys[j]);
  }
  ctx.stroke();
  ctx.lineWidth = 1;
}

function drawColorbar(ctx, S, W, H) {
  if (!S.values || !S.range || S.colorBy === "body") return;
  const x = W - 22, y0 = 30, h = H - 60, [lo, top] = S.range;
  for (let i = 0; i < h; i++) {
    ctx.fillStyle = diverging(1 - (2 * i) / h);
    ctx.fillRect(x, y0 + i, 12, 1);
  }
  ctx.fillStyle = "#222";
  ctx.font = "11px sans-serif";
  ctx.textAlign = "right";
  ctx.fillText(top.toPrecision(3), x + 12, y0 - 6);
  ctx.fillText(lo.toPrecision(3), x + 12, y0 + h + 14);
  ctx.fillText(S.colorBy === "tension" ? "tension [N]" : "strain", x + 12, y0 + h + 28);
  ctx.textAlign = "left";
}

// The scene on the Canvas 2D layer; in 3D with WebGL 2 (G), faces and colliders go to
// the WebGL layer below it, and this layer is cleared to transparent instead of white.
function drawScene(ctx, cam, S, W, H, G, dpr) {
  const n = S.nodes, dim = S.dim, gl = G && dim === 3;
  if (G) G.canvas.style.visibility = gl ? "visible" : "hidden";
  ctx.clearRect(0, 0, W, H);
  if (!gl) {
    ctx.fillStyle = "#ffffff";
    ctx.fillRect(0, 0, W, H);
  }
  if (!S.pos || S.pos.length !== n * dim) return null;
  if (!cam.fitted) fit(cam, S, W, H);
  const P = (x, y, z) => project(cam, dim, W, H, x, y, z);
  const xs = new Float32Array(n), ys = new Float32Array(n), ds = new Float32Array(n);
  for (let pass = 0; pass < 2; pass++) {
    let out = false;
    for (let i = 0; i < n; i++) {
      const q = P(S.pos[i * dim], S.pos[i * dim + 1], dim === 3 ? S.pos[i * dim + 2] : 0);
      xs[i] = q[0]; ys[i] = q[1]; ds[i] = q[2];
      out ||= q[0] < 0.03 * W || q[0] > 0.97 * W || q[1] < 0.03 * H || q[1] > 0.97 * H || (dim === 3 && q[2] <= 1e-6);
    }
    // a node left the view: widen it, unless the user moved the camera
    if (!out || cam.user || pass) break;
    fit(cam, S, W, H, true);
  }
  if (gl) {
    drawGL(G, cam, S, W, H, dpr, unproject(cam, 3, 2, 2, 1, 1, 0));
  } else {
    drawColliders(ctx, cam, S, W, H, P);
    drawShapes(ctx, cam, S, P);
    drawFaces(ctx, S, xs, ys, ds, cam);
  }
  // springs are drawn over faces only when coloured: a fine cloth's lines hide it
  if (!S.faces.length || S.values) drawSprings(ctx, S, xs, ys);
  drawRadii(ctx, cam, S, xs, ys, ds, H);
  drawContacts(ctx, S, xs, ys);
  // nodes as dots while they can be told apart; on a fine mesh its faces show it
  const r = n <= 200 ? 4 : n <= 2000 && !S.faces.length ? 2 : 0;
  if (r) {
    // by body: one fill per palette colour (k), the nodes no spring joins plain (-1)
    const bodies = S.values && S.colorBy === "body" ? nodeBodies(S) : null;
    for (let k = -1; k < (bodies ? TAB10.length : 0); k++) {
      ctx.fillStyle = k < 0 ? NODE : TAB10[k];
      ctx.beginPath();
      for (let i = 0; i < n; i++)
        if (!S.pinned[i] && (!bodies || (bodies[i] < 0 ? -1 : bodies[i] % TAB10.length) === k)) {
          ctx.moveTo(xs[i] + r, ys[i]);
          ctx.arc(xs[i], ys[i], r, 0, 2 * Math.PI);
        }
      ctx.fill();
    }
  }
  drawArrows(ctx, S, P);
  ctx.fillStyle = PIN;
  for (let i = 0; i < n; i++)
    if (S.pinned[i]) ctx.fillRect(xs[i] - 4, ys[i] - 4, 9, 9);
  drawColorbar(ctx, S, W, H);
  ctx.fillStyle = "#222";
  ctx.font = "12px sans-serif";
  ctx.fillText(`t = ${S.time.toFixed(3)} s`, 8, 16);
  return { xs, ys, ds };
}

// One sample per time, as protocol.Trace keeps them: a frame at the last sample's
// time replaces it, an earlier one (a reset) starts the trace again.
function addSample(hist, t, e) {
  const last = hist.length ? hist[hist.length - 1].t : -Infinity;
  if (t < last) hist.length = 0;
  else if (t === last) hist.pop();
  hist.push({ t, ...e, books: e.total + e.dissipated });
  if (hist.length > HISTORY) hist.shift();
}

function drawEnergy(ctx, hist, W, H) {
  ctx.fillStyle = "#ffffff";
  ctx.fillRect(0, 0, W, H);
  ctx.font = "11px sans-serif";
  if (hist.length < 2) return;
  const shown = TERMS.filter(([k]) => hist.some((e) => Math.abs(e[k]) > 0));
  let lo = Infinity, hi = -Infinity;
  for (const e of hist) for (const [k] of shown) { lo = Math.min(lo, e[k]); hi = Math.max(hi, e[k]); }
  if (hi - lo < 1e-12) { hi += 1; lo -= 1; }
  const t0 = hist[0].t, t1 = hist[hist.length - 1].t || t0 + 1, L = 46, R = 90, T = 8, B = 22;
  const X = (t) => L + ((t - t0) / (t1 - t0 || 1)) * (W - L - R);
  const Y = (v) => T + (1 - (v - lo) / (hi - lo)) * (H - T - B);
  ctx.strokeStyle = "#bbb";
  ctx.strokeRect(L, T, W - L - R, H - T - B);
  ctx.fillStyle = "#222";
  ctx.fillText(`${hi.toPrecision(3)} J`, 2, T + 8);
  ctx.fillText(`${lo.toPrecision(3)} J`, 2, H - B);
  ctx.fillText(`${t0.toFixed(2)} s`, L, H - 6);
  ctx.fillText(`${t1.toFixed(2)} s`, W - R - 40, H - 6);
  shown.forEach(([k, color], j) => {
    ctx.strokeStyle = color;
    ctx.lineWidth = k === "total" || k === "books" ? 2 : 1;
    ctx.beginPath();
    hist.forEach((e, i) => (i ? ctx.lineTo(X(e.t), Y(e[k])) : ctx.moveTo(X(e.t), Y(e[k]))));
    ctx.stroke();
    ctx.fillStyle = color;
    ctx.fillText(k === "books" ? "total+dissipated" : k, W - R + 6, T + 12 + 14 * j);
  });
  ctx.lineWidth = 1;
}

// Arrows from each origin along its vector as drawn (metres, protocol.frame), in their
// kind's colour: a shaft and a head of two strokes 7 px back from the tip at ±25°.
const ARROW_COLORS = { velocity: "#2ca02c", force: "#9467bd" };
function drawArrows(ctx, S, P) {
  const A = S.arrows;
  if (!A || !A.count) return;
  const dim = S.dim, o = A.origins, v = A.vectors;
  ctx.strokeStyle = ARROW_COLORS[A.kind] || "#2ca02c";
  ctx.lineWidth = 2;
  ctx.beginPath();
  for (let i = 0; i < A.count; i++) {
    const p = [0, 0, 0], q = [0, 0, 0];
    for (let k = 0; k < dim; k++) { p[k] = o[i * dim + k]; q[k] = p[k] + v[i * dim + k]; }
    const a = P(p[0], p[1], p[2]), b = P(q[0], q[1], q[2]);
    const dx = b[0] - a[0], dy = b[1] - a[1], len = Math.hypot(dx, dy);
    if (!(len >= 1)) continue;
    ctx.moveTo(a[0], a[1]);
    ctx.lineTo(b[0], b[1]);
    const head = Math.min(7, 0.4 * len), ux = dx / len, uy = dy / len;
    for (const s of [1, -1]) {
      const c = Math.cos(0.44), n = s * Math.sin(0.44);
      ctx.moveTo(b[0], b[1]);
      ctx.lineTo(b[0] - head * (c * ux - n * uy), b[1] - head * (n * ux + c * uy));
    }
  }
  ctx.stroke();
  ctx.lineWidth = 1;
}

// The energy now as bars (PhET's energy chart): each term, what was dissipated, and
// the total, on a scale fixed by the trace kept so far (every term's extent, and 0),
// so a bar's height is its energy: y = zero - E px (px per J). Returns the layout.
const BARS = [["kinetic", "#1f77b4", "kinetic"], ["elastic", "#2ca02c", "elastic"],
              ["gravity", "#9467bd", "gravity"], ["contact", "#e377c2", "contact"],
              ["pressure", "#8c564b", "gas"], ["dissipated", "#ff7f0e", "dissipated"],
              ["total", "#111111", "total"]];
function drawBars(ctx, hist, W, H) {
  ctx.fillStyle = "#ffffff";
  ctx.fillRect(0, 0, W, H);
  if (!hist.length) return null;
  const now = hist[hist.length - 1];
  let lo = 0, hi = 0;
  for (const e of hist) for (const [k] of BARS) { lo = Math.min(lo, e[k]); hi = Math.max(hi, e[k]); }
  if (hi - lo < 1e-12) hi = lo + 1;
  const L = 46, R = 8, T = 12, B = 34, slot = (W - L - R) / BARS.length;
  const px = (H - T - B) / (hi - lo), zero = T + hi * px;
  ctx.font = "11px sans-serif";
  ctx.fillStyle = "#222";
  ctx.fillText(`${hi.toPrecision(3)} J`, 2, T + 4);
  ctx.fillText(`${lo.toPrecision(3)} J`, 2, H - B);
  ctx.fillText("0", L - 14, zero + 4); // zero, marked in the margin (not across)
  ctx.fillRect(L - 6, Math.round(zero), 5, 1);
  const xs = [];
  BARS.forEach(([k, color, label], j) => {
    const x = L + slot * (j + 0.2), w = slot * 0.6, y = zero - now[k] * px;
    ctx.fillStyle = color;
    ctx.fillRect(x, Math.min(y, zero), w, Math.abs(zero - y));
    ctx.fillStyle = "#222";
    ctx.save();
    ctx.translate(x + w / 2, H - B + 4);
    ctx.rotate(0.5);
    ctx.fillText(label, 0, 8);
    ctx.restore();
    xs.push(x + w / 2);
  });
  return { terms: BARS.map(([k]) => k), xs, zero, px, width: slot * 0.6, top: T, bottom: H - B };
}

function render({ model, el }) {
  const S = { dim: 3, nodes: 0, springs: new Int32Array(0), faces: new Int32Array(0),
              colliders: [], triangles: new Float32Array(0), radii: null, bounds: null, pos: null,
              pinned: new Uint8Array(0), values: null, range: null, contacts: null,
              colorBy: null, arrows: null, energyBars: false, time: 0, frame: 0, playing: false, offline: false, error: null };
  const cam = makeCamera(), hist = [];
  const W = 560, H = 420, EW = 380, EH = 260;
  const root = element("div", { class: "springsim-viewer" }, el);
  root.style.cssText = "font: 13px sans-serif; display: inline-block; user-select: none;";
  const bar = element("div", {}, root);
  const buttons = {};
  for (const [action, label] of [["play", "▶ play"], ["pause", "❚❚ pause"], ["step", "step"],
                                 ["reset", "reset"]])
    buttons[action] = element("button", { "data-action": action }, bar, label);
  const fields = {};
  for (const [name, label] of [["speed", "speed ×"], ["substeps", "substeps"], ["dt", "dt [s]"]]) {
    element("label", {}, bar, ` ${label} `);
    fields[name] = element("input", { "data-name": name, type: "number", style: "width: 6em" }, bar);
  }
  // the integration method (options from the state message: springsim.METHODS; none in
  // a saved page, which hides it) and, beside it, the kernel's hint for a stiff system
  const methodSelect = element("select", { "data-name": "method", title: "integration method" }, bar);
  const hint = element("span", { "data-role": "hint", style: "margin: 0 6px; color: #b35900",
                                 title: "a stable step of this explicit method takes longer to compute " +
                                        "than the time it simulates: it cannot play in real time here" }, bar);
  const select = element("select", { "data-name": "color_by" }, bar);
  for (const [value, label] of [["", "plain"], ["tension", "tension"], ["strain", "strain"], ["body", "body"]])
    element("option", { value }, select, label);
  const arrowSelect = element("select", { "data-name": "arrows" }, bar);
  for (const [value, label] of [["", "no arrows"], ["velocity", "velocity"], ["force", "force"]])
    element("option", { value }, arrowSelect, label);
  const perSelect = element("select", { "data-name": "arrows_per" }, bar);
  for (const value of ["node", "body"]) element("option", { value }, perSelect, `per ${value}`);
  const barsLabel = element("label", {}, bar, " bars");
  const barsBox = element("input", { type: "checkbox", "data-name": "energy_bars" });
  barsLabel.prepend(barsBox);
  const contactsLabel = element("label", {}, bar, " contacts");
  const contactsBox = element("input", { type: "checkbox", "data-name": "contacts" });
  contactsLabel.prepend(contactsBox);
  const status = element("span", { "data-role": "status", style: "margin-left: 8px" }, bar);
  const dpr = window.devicePixelRatio || 1;
  const row = element("div", { style: "display: flex; gap: 6px; align-items: flex-start" }, root);
  // the scene: a WebGL layer (3D faces, colliders) under a Canvas 2D layer (the rest)
  const stack = element("div", { style: `position: relative; width: ${W}px; height: ${H}px` }, row);
  const under = element("canvas", { "data-role": "faces" }, stack);
  const canvas = element("canvas", { "data-role": "scene" }, stack);
  const plot = element("canvas", { "data-role": "energy" }, row);
  for (const [c, w, h] of [[under, W, H], [canvas, W, H], [plot, EW, EH]]) {
    c.width = w * dpr; c.height = h * dpr;
    c.style.cssText = `width: ${w}px; height: ${h}px; display: block; outline: 1px solid #ddd;`;
  }
  under.style.position = canvas.style.position = "absolute";
  under.style.left = canvas.style.left = under.style.top = canvas.style.top = "0";
  const G = makeGL(under);
  if (G) G.canvas = under;
  else under.style.visibility = "hidden";
  const ctx = canvas.getContext("2d"), ectx = plot.getContext("2d");
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ectx.setTransform(dpr, 0, 0, dpr, 0, 0);
  const sliderBox = element("div", {}, root);
  let screen = null, dirty = true, rendered = 0, grab = null, drag = null, raf = 0;
  // what was sent (counted by type: the tests read them), and the lag rule's state
  const sent = {}, pace = { offset: Infinity, lag: 0, held: false, lastSent: clock(),
                            lastFrame: 0, timer: 0, alive: ALIVE_EVERY };
  const send = (msg) => {
    sent[msg.type] = (sent[msg.type] || 0) + 1;
    pace.lastSent = clock();
    model.send(msg);
  };
  // Called as each live frame is processed: hold when the lag passes HOLD_LAG (frames
  // pile up faster than this page takes them), resume under RESUME_LAG or once nothing
  // has come for DRAINED s (the kernel stopped: what was in flight is taken), and say
  // "alive" after pace.alive s without a message while frames come.
  function watchLag(kernelSent) {
    const now = clock(), d = now - kernelSent;
    pace.offset = Math.min(pace.offset, d);
    pace.lag = d - pace.offset;
    pace.lastFrame = now;
    if (!pace.held && pace.lag > HOLD_LAG) {
      pace.held = true;
      send({ type: "hold" });
      const check = () => {
        if (!pace.held) return;
        if (clock() - pace.lastFrame >= DRAINED) resume();
        else pace.timer = setTimeout(check, 1000 * DRAINED);
      };
      pace.timer = setTimeout(check, 1000 * DRAINED);
    } else if (pace.held && pace.lag < RESUME_LAG) {
      resume();
    } else if (now - pace.lastSent >= pace.alive) {
      send({ type: "alive" });
    }
  }
  function resume() {
    pace.held = false;
    clearTimeout(pace.timer);
    send({ type: "resume" });
  }

  const onMessage = (msg, buffers) => {
    if (msg.type === "scene") {
      const fresh = S.nodes !== msg.nodes || S.dim !== msg.dim;
      Object.assign(S, { dim: msg.dim, nodes: msg.nodes, colliders: msg.colliders,
                         springs: typed(buffers[0], Int32Array), faces: typed(buffers[1], Int32Array),
                         triangles: typed(buffers[2], Float32Array),
                         radii: msg.radii ? typed(buffers[3], Float32Array) : null,
                         bounds: msg.bounds || null });
      if (fresh) cam.fitted = false;
    } else if (msg.type === "frame") {
      const pos = typed(buffers[0], Float32Array);
      if (Number.isFinite(msg.sent)) watchLag(msg.sent); // live frames only
      if (pos.length !== S.nodes * S.dim) return;
      Object.assign(S, { pos, pinned: typed(buffers[1], Uint8Array), time: msg.time,
                         frame: msg.frame, colorBy: msg.color_by, range: msg.range,
                         achieved: msg.achieved_speed,
                         values: msg.range ? typed(buffers[2], Float32Array) : null,
                         // the pairs touching, after the values (when the box is on)
                         contacts: msg.contacts != null
                           ? typed(buffers[msg.range ? 3 : 2], Int32Array) : null });
      const A = msg.arrows, at = buffers.length - 2;
      S.arrows = A ? { ...A, origins: typed(buffers[at], Float32Array),
                       vectors: typed(buffers[at + 1], Float32Array) } : null;
      if (grab && drag) S.pos.set(drag, grab.node * S.dim); // the hand wins until released
      addSample(hist, msg.time, msg.energy);
      dirty = true;
    } else if (msg.type === "trace") {
      // the trace Python kept (a reloaded page): time, then each of msg.terms
      const rows = typed(buffers[0], Float64Array), width = 1 + msg.terms.length;
      hist.length = 0;
      for (let i = 0; i < msg.samples; i++) {
        const e = {};
        msg.terms.forEach((k, j) => { e[k] = rows[i * width + 1 + j]; });
        addSample(hist, rows[i * width], e);
      }
      dirty = true;
    } else if (msg.type === "state") {
      Object.assign(S, { playing: msg.playing, offline: !!msg.offline, error: msg.error });
      S.speed = msg.speed;
      if (msg.alive_every > 0) pace.alive = msg.alive_every;
      for (const name of ["speed", "substeps", "dt"])
        if (document.activeElement !== fields[name] && msg[name] != null)
          fields[name].value = name === "speed" ? +msg[name].toPrecision(4) : msg[name];
      const methods = msg.methods || [];
      if ([...methodSelect.options].map((o) => o.value).join() !== methods.join()) {
        methodSelect.textContent = "";
        for (const m of methods) element("option", { value: m }, methodSelect, m);
      }
      if (msg.method) methodSelect.value = msg.method;
      methodSelect.style.display = methods.length ? "" : "none";
      hint.textContent = msg.hint || "";
      select.value = msg.color_by || "";
      arrowSelect.value = msg.arrows || "";
      perSelect.value = msg.arrows_per || "node";
      if (msg.energy_bars !== undefined) S.energyBars = !!msg.energy_bars;
      barsBox.checked = S.energyBars;
      contactsBox.checked = !!msg.contacts;
      contactsBox.disabled = S.offline;
      for (const f of Object.values(fields)) f.disabled = S.offline;
      select.disabled = arrowSelect.disabled = perSelect.disabled = S.offline;
      buildSliders(msg.sliders || []);
      dirty = true;
    } else if (msg.type === "error") {
      S.error = msg.message;
      dirty = true;
    }
  };
  model.on("msg:custom", onMessage);

  function buildSliders(list) {
    const have = [...sliderBox.querySelectorAll("input")].map((i) => i.dataset.slider).join();
    if (have === list.map((s) => s.name).join()) {
      for (const s of list) {
        const input = sliderBox.querySelector(`input[data-slider="${s.name}"]`);
        if (document.activeElement !== input) input.value = s.value;
        input.nextSibling.textContent = ` ${(+s.value).toPrecision(3)} ${s.unit}`;
      }
      return;
    }
    sliderBox.textContent = "";
    for (const s of list) {
      const row = element("div", {}, sliderBox);
      element("label", { style: "display: inline-block; width: 6em" }, row, s.name);
      const input = element("input", { type: "range", "data-slider": s.name, min: s.min, max: s.max,
                                       step: (s.max - s.min) / 200, value: s.value }, row);
      element("span", {}, row, ` ${(+s.value).toPrecision(3)} ${s.unit}`);
      input.addEventListener("input", () =>
        send({ type: "slider", name: s.name, value: Math.min(s.max, Math.max(s.min, +input.value)) }));
    }
  }

  for (const action of Object.keys(buttons))
    buttons[action].addEventListener("click", () => send({ type: action }));
  for (const name of Object.keys(fields))
    fields[name].addEventListener("change", () => {
      const v = +fields[name].value;
      if (isFinite(v) && v > 0) send({ type: "set", name, value: name === "substeps" ? Math.round(v) : v });
    });
  methodSelect.addEventListener("change", () => send({ type: "set", name: "method", value: methodSelect.value }));
  select.addEventListener("change", () => send({ type: "set", name: "color_by", value: select.value || null }));
  arrowSelect.addEventListener("change", () => send({ type: "set", name: "arrows", value: arrowSelect.value || null }));
  perSelect.addEventListener("change", () => send({ type: "set", name: "arrows_per", value: perSelect.value }));
  barsBox.addEventListener("change", () => {
    // drawn here at once (a saved page has no kernel to ask), and told to Python
    S.energyBars = barsBox.checked;
    dirty = true;
    send({ type: "set", name: "energy_bars", value: barsBox.checked });
  });

  contactsBox.addEventListener("change", () => {
    if (!contactsBox.checked) { S.contacts = null; dirty = true; } // gone at once
    send({ type: "set", name: "contacts", value: contactsBox.checked });
  });

  const mouse = (e) => { const b = canvas.getBoundingClientRect(); return [e.clientX - b.left, e.clientY - b.top]; };
  function nearest(mx, my) {
    if (!screen) return -1;
    let best = -1, bestD = 10 * 10;
    for (let i = 0; i < S.nodes; i++) {
      const d = (screen.xs[i] - mx) ** 2 + (screen.ys[i] - my) ** 2;
      if (d < bestD) { bestD = d; best = i; }
    }
    return best;
  }
  let orbit = null;
  canvas.addEventListener("contextmenu", (e) => e.preventDefault());
  canvas.addEventListener("dblclick", () => { cam.fitted = cam.user = false; dirty = true; });
  canvas.addEventListener("mousedown", (e) => {
    const [mx, my] = mouse(e), node = nearest(mx, my);
    e.preventDefault();
    if (node >= 0 && e.button === 0 && e.shiftKey) { send({ type: "pin", node }); return; }
    if (node >= 0 && e.button === 0 && !e.ctrlKey) {
      grab = { node, depth: screen.ds[node] };
      drag = null;
      send({ type: "grab", node });
      return;
    }
    const pan = S.dim === 2 || e.button !== 0 || e.ctrlKey || e.metaKey;
    orbit = { mx, my, pan, yaw: cam.yaw, pitch: cam.pitch, target: cam.target.slice(),
              center: cam.center.slice() };
  });
  const onMove = (e) => {
    const [mx, my] = mouse(e);
    if (grab) {
      const p = unproject(cam, S.dim, W, H, mx, my, grab.depth);
      drag = p.slice(0, S.dim);
      send({ type: "drag", node: grab.node, position: drag });
      if (S.pos) S.pos.set(drag, grab.node * S.dim);
      dirty = true;
    } else if (orbit) {
      const dx = mx - orbit.mx, dy = my - orbit.my;
      cam.user = true; // the camera is the user's now: no more automatic framing
      if (S.dim === 2) {
        cam.center = [orbit.center[0] - dx / cam.scale, orbit.center[1] + dy / cam.scale];
      } else if (orbit.pan) {
        const a = unproject(cam, 3, W, H, orbit.mx, orbit.my, cam.distance);
        const b = unproject(cam, 3, W, H, mx, my, cam.distance);
        cam.target = orbit.target.map((t, k) => t - (b[k] - a[k]));
        orbit.mx = mx; orbit.my = my; orbit.target = cam.target.slice();
      } else {
        cam.yaw = orbit.yaw - dx * 0.01;
        cam.pitch = Math.max(-1.5, Math.min(1.5, orbit.pitch + dy * 0.01));
      }
      dirty = true;
    }
  };
  const onUp = () => {
    if (grab) send({ type: "release", node: grab.node });
    grab = drag = orbit = null;
  };
  window.addEventListener("mousemove", onMove);
  window.addEventListener("mouseup", onUp);
  canvas.addEventListener("wheel", (e) => {
    e.preventDefault();
    cam.user = true;
    const k = Math.exp(e.deltaY * 0.001);
    if (S.dim === 2) cam.scale /= k; else cam.distance *= k;
    dirty = true;
  });

  let last = performance.now(), fps = 0, drawn = 0, drawTime = 0;
  let bars = null; // the bar chart's layout, when drawn
  function loop(now) {
    raf = requestAnimationFrame(loop);
    if (!dirty) return;
    dirty = false;
    const began = performance.now();
    screen = drawScene(ctx, cam, S, W, H, G, dpr) || screen;
    if (S.energyBars) bars = drawBars(ectx, hist, EW, EH);
    else { bars = null; drawEnergy(ectx, hist, EW, EH); }
    drawTime = 0.9 * drawTime + 0.1 * (performance.now() - began);
    rendered += 1;
    fps = 0.9 * fps + 0.1 * (1000 / Math.max(1, now - last));
    last = now;
    status.textContent = `t = ${S.time.toFixed(3)} s · frame ${S.frame}` +
      (S.playing ? ` · ${fps.toFixed(0)} fps` : " · paused") +
      // the speed reached, when the kernel cannot step the speed asked for in time
      (S.playing && S.achieved > 0 && S.speed && S.achieved < 0.9 * S.speed
        ? ` · speed ${S.achieved.toPrecision(2)}× (asked ${S.speed}×)` : "") +
      (S.error ? ` · ${S.error}` : "");
    drawn = S.frame;
  }
  raf = requestAnimationFrame(loop);
  // what the browser test reads: the camera, the state, the last frame drawn (`drawn`:
  // a frame that has arrived may not be on the canvas yet), draws so far
  root.springsimView = {
    camera: () => ({ ...cam, dim: S.dim, width: W, height: H, dpr, webgl: !!G }),
    state: () => ({ time: S.time, frame: S.frame, drawn, nodes: S.nodes, playing: S.playing, rendered, drawTime,
                   traceLength: hist.length, sent: { ...sent }, lag: pace.lag, held: pace.held }),
    trace: () => hist.map((e) => ({ ...e })),
    bars: () => bars,
    contacts: () => (S.contacts ? [...S.contacts] : null),
    arrows: () => (S.arrows ? { ...S.arrows, origins: [...S.arrows.origins], vectors: [...S.arrows.vectors] } : null),
  };
  send({ type: "hello" });
  return () => {
    cancelAnimationFrame(raf);
    clearTimeout(pace.timer);
    window.removeEventListener("mousemove", onMove);
    window.removeEventListener("mouseup", onUp);
  };
}

export default { render };
