// springsim's live viewer: the boxes, capsules and mesh colliders (the triangles of
// the scene message) and the nodes' contact radii. Python joins this file, gl.js and
// viewer.js into one ES module (springsim.viewer.standalone.front_end), so their
// functions share one scope and nothing is imported.
//
// 2D and the Canvas 2D fallback: the triangles filled in one flat grey (2D) or lit
// like the faces, far to near (3D); gl.js draws them lit and opaque like the spheres.
// A node's radius is a translucent orange disc (matplotlib's draw() uses the same
// colour) of that radius in world units: r scale px in 2D, r f / d px in 3D (the
// projection's f and depth d, as a sphere collider is drawn).

const SHAPE_2D = "rgb(150,150,150)";
const SHAPE_LIT = [[70, 70, 70], [160, 160, 160]]; // gl.js's BALL
const RADIUS_FILL = "rgba(255,127,14,0.3)";

// The triangles (a float32 soup, 3 vertices of dim coordinates each) as a flat-shaded
// mesh for gl.js: [positions (z = 0 in 2D), per-triangle normals, indices].
function triangleMesh(T, dim) {
  const count = T.length / dim, P = new Float32Array(3 * count);
  const N = new Float32Array(3 * count), I = new Uint32Array(count);
  for (let v = 0; v < count; v++) {
    for (let k = 0; k < dim; k++) P[3 * v + k] = T[dim * v + k];
    I[v] = v;
  }
  for (let a = 0; a < 3 * count; a += 9) {
    const ux = P[a + 3] - P[a], uy = P[a + 4] - P[a + 1], uz = P[a + 5] - P[a + 2];
    const wx = P[a + 6] - P[a], wy = P[a + 7] - P[a + 1], wz = P[a + 8] - P[a + 2];
    const n = [uy * wz - uz * wy, uz * wx - ux * wz, ux * wy - uy * wx];
    for (let j = 0; j < 9; j++) N[a + j] = n[j % 3];
  }
  return [P, N, I];
}

// The triangles on the Canvas 2D layer (P: world to screen, as in viewer.js).
function drawShapes(ctx, cam, S, P) {
  const T = S.triangles, dim = S.dim, m = T.length / (3 * dim);
  if (!m) return;
  const q = [];
  for (let v = 0; v < 3 * m; v++)
    q.push(P(T[dim * v], T[dim * v + 1], dim === 3 ? T[dim * v + 2] : 0));
  const path = (i) => {
    ctx.beginPath();
    ctx.moveTo(q[3 * i][0], q[3 * i][1]);
    ctx.lineTo(q[3 * i + 1][0], q[3 * i + 1][1]);
    ctx.lineTo(q[3 * i + 2][0], q[3 * i + 2][1]);
    ctx.closePath();
  };
  if (dim === 2) {
    // filled and stroked in one colour: the seams between a shape's triangles close
    ctx.fillStyle = ctx.strokeStyle = SHAPE_2D;
    for (let i = 0; i < m; i++) { path(i); ctx.fill(); ctx.stroke(); }
    return;
  }
  const [, N] = triangleMesh(T, 3), eye = unproject(cam, 3, 2, 2, 1, 1, 0);
  const e = [0, 1, 2].map((k) => eye[k] - cam.target[k]), en = Math.hypot(...e) || 1;
  const order = Array.from({ length: m }, (_, i) => i);
  const depth = order.map((i) => q[3 * i][2] + q[3 * i + 1][2] + q[3 * i + 2][2]);
  order.sort((a, b) => depth[b] - depth[a]);
  const [base, lit] = SHAPE_LIT;
  for (const i of order) {
    const n = [N[9 * i], N[9 * i + 1], N[9 * i + 2]];
    const s = 0.35 + (0.65 * Math.abs(n[0] * e[0] + n[1] * e[1] + n[2] * e[2])) / ((Math.hypot(...n) || 1) * en);
    const c = base.map((b, k) => Math.round(b + s * lit[k]));
    ctx.fillStyle = ctx.strokeStyle = `rgb(${c[0]},${c[1]},${c[2]})`;
    path(i);
    ctx.fill();
    ctx.stroke();
  }
}

// A disc of each node's radius around its screen position (xs, ys; depth ds in 3D).
function drawRadii(ctx, cam, S, xs, ys, ds, H) {
  const R = S.radii;
  if (!R || R.length !== S.nodes) return;
  const f = H / 2 / Math.tan(cam.fov / 2);
  ctx.fillStyle = RADIUS_FILL;
  ctx.beginPath(); // one path: overlapping discs are filled once, not darker
  for (let i = 0; i < S.nodes; i++) {
    if (!(R[i] > 0)) continue;
    const r = S.dim === 2 ? R[i] * cam.scale : (R[i] * f) / ds[i];
    ctx.moveTo(xs[i] + r, ys[i]);
    ctx.arc(xs[i], ys[i], r, 0, 2 * Math.PI);
  }
  ctx.fill();
}
