// springsim's live viewer, 3D faces and colliders (spheres, planes, and the boxes,
// capsules and meshes as triangles: shapes.js's triangleMesh) in WebGL 2 (drawn under
// viewer.js's Canvas 2D layer, which keeps springs, nodes, pins and labels). Python joins
// shapes.js, this file and viewer.js into one ES module. Where WebGL 2 is missing,
// viewer.js draws the faces itself (Canvas 2D, painter's order).
//
// The vertex shader projects exactly as project() in viewer.js, with a depth buffer
// in place of painter's order; the light is at the eye, two-sided (a cloth is seen
// from both sides): brightness s = 0.35 + 0.65 |n . l|, colour base + s * lit.

const GL_VERTEX = `#version 300 es
in vec3 p;
in vec3 n;
uniform vec3 target;
uniform vec3 eye;
uniform vec2 angles;   // yaw, pitch
uniform vec2 lens;     // distance, f = (H/2) / tan(fov/2)
uniform vec2 size;     // W, H in CSS px
uniform vec2 range;    // near, far
out float shade;
void main() {
  vec3 r = p - target;
  float cy = cos(angles.x), sy = sin(angles.x), cp = cos(angles.y), sp = sin(angles.y);
  float x1 = cy * r.x + sy * r.z, z1 = -sy * r.x + cy * r.z;
  float y2 = cp * r.y - sp * z1, z2 = sp * r.y + cp * z1;
  float d = lens.x - z2, a = range.x, b = range.y;
  gl_Position = vec4(lens.y * x1 / (0.5 * size.x), lens.y * y2 / (0.5 * size.y),
                     (b + a) / (b - a) * d - 2.0 * a * b / (b - a), d);
  vec3 l = normalize(eye - p);
  vec3 m = dot(n, n) > 0.0 ? normalize(n) : l;
  shade = 0.35 + 0.65 * abs(dot(m, l));
}`;

const GL_FRAGMENT = `#version 300 es
precision mediump float;
in float shade;
uniform vec3 base;
uniform vec3 lit;
uniform float alpha;
out vec4 colour;
void main() { colour = vec4((base + lit * shade) / 255.0, alpha); }`;

// The same colours as viewer.js's Canvas 2D faces: rgb(60 + 120 s, 110 + 130 s, 40 + 200 s).
const CLOTH = [[60, 110, 40], [120, 130, 200]];
const BALL = [[70, 70, 70], [160, 160, 160]];
const FLOOR = [[150, 150, 150], [0, 0, 0]];

function glProgram(gl) {
  const program = gl.createProgram();
  for (const [type, source] of [[gl.VERTEX_SHADER, GL_VERTEX], [gl.FRAGMENT_SHADER, GL_FRAGMENT]]) {
    const shader = gl.createShader(type);
    gl.shaderSource(shader, source);
    gl.compileShader(shader);
    if (!gl.getShaderParameter(shader, gl.COMPILE_STATUS)) throw new Error(gl.getShaderInfoLog(shader));
    gl.attachShader(program, shader);
  }
  gl.linkProgram(program);
  if (!gl.getProgramParameter(program, gl.LINK_STATUS)) throw new Error(gl.getProgramInfoLog(program));
  return program;
}

// Whether WebGL runs on the CPU (SwiftShader: headless browsers, machines without a
// GPU), where multisampling costs a third of the frame rate: edges are left jagged there.
function softwareGL() {
  try {
    const probe = document.createElement("canvas").getContext("webgl2");
    const info = probe && probe.getExtension("WEBGL_debug_renderer_info");
    const name = info ? String(probe.getParameter(info.UNMASKED_RENDERER_WEBGL)) : "";
    probe?.getExtension("WEBGL_lose_context")?.loseContext();
    return /swiftshader|llvmpipe|software/i.test(name);
  } catch (e) {
    return false;
  }
}

// A WebGL 2 drawer on `canvas`, or null where WebGL 2 is missing.
function makeGL(canvas) {
  let gl = null;
  try {
    gl = canvas.getContext("webgl2", { antialias: !softwareGL() });
  } catch (e) {
    gl = null;
  }
  if (!gl) return null;
  let program;
  try {
    program = glProgram(gl);
  } catch (e) {
    return null;
  }
  const where = (name) => gl.getUniformLocation(program, name);
  const uniforms = {};
  for (const name of ["target", "eye", "angles", "lens", "size", "range", "base", "lit", "alpha"])
    uniforms[name] = where(name);
  const mesh = () => ({ p: gl.createBuffer(), n: gl.createBuffer(), i: gl.createBuffer(), count: 0 });
  return { gl, program, uniforms, p: gl.getAttribLocation(program, "p"),
           n: gl.getAttribLocation(program, "n"), faces: mesh(), extra: mesh(),
           shapes: mesh() };
}

function glUpload(G, mesh, positions, normals, indices) {
  const gl = G.gl;
  gl.bindBuffer(gl.ARRAY_BUFFER, mesh.p);
  gl.bufferData(gl.ARRAY_BUFFER, positions, gl.DYNAMIC_DRAW);
  gl.bindBuffer(gl.ARRAY_BUFFER, mesh.n);
  gl.bufferData(gl.ARRAY_BUFFER, normals, gl.DYNAMIC_DRAW);
  if (indices) {
    gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, mesh.i);
    gl.bufferData(gl.ELEMENT_ARRAY_BUFFER, indices, gl.DYNAMIC_DRAW);
    mesh.count = indices.length;
  }
}

function glDraw(G, mesh, [base, lit], alpha) {
  const gl = G.gl;
  if (!mesh.count) return;
  gl.uniform3fv(G.uniforms.base, base);
  gl.uniform3fv(G.uniforms.lit, lit);
  gl.uniform1f(G.uniforms.alpha, alpha);
  for (const [attribute, buffer] of [[G.p, mesh.p], [G.n, mesh.n]]) {
    gl.bindBuffer(gl.ARRAY_BUFFER, buffer);
    gl.enableVertexAttribArray(attribute);
    gl.vertexAttribPointer(attribute, 3, gl.FLOAT, false, 0, 0);
  }
  gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, mesh.i);
  gl.drawElements(gl.TRIANGLES, mesh.count, gl.UNSIGNED_INT, 0);
}

// Area-weighted vertex normals (the sum of the cross products of the faces around).
function vertexNormals(p, F, n) {
  const out = new Float32Array(3 * n);
  for (let k = 0; k < F.length; k += 3) {
    const a = 3 * F[k], b = 3 * F[k + 1], c = 3 * F[k + 2];
    const ux = p[b] - p[a], uy = p[b + 1] - p[a + 1], uz = p[b + 2] - p[a + 2];
    const wx = p[c] - p[a], wy = p[c + 1] - p[a + 1], wz = p[c + 2] - p[a + 2];
    const nx = uy * wz - uz * wy, ny = uz * wx - ux * wz, nz = ux * wy - uy * wx;
    for (const v of [a, b, c]) { out[v] += nx; out[v + 1] += ny; out[v + 2] += nz; }
  }
  return out;
}

// Spheres (a latitude-longitude mesh each) and the patch of each plane around the
// view's target, as one mesh per kind: [positions, normals, indices].
function colliderMeshes(colliders, cam) {
  const balls = [[], [], []], floors = [[], [], []];
  for (const c of colliders) {
    const v = c.slice(1, 4), s = c[4];
    if (c[0] === 1) {
      const [P, N, I] = balls, start = P.length / 3, rows = 16, cols = 24;
      for (let i = 0; i <= rows; i++)
        for (let j = 0; j <= cols; j++) {
          const t = (Math.PI * i) / rows, f = (2 * Math.PI * j) / cols;
          const u = [Math.sin(t) * Math.cos(f), Math.cos(t), Math.sin(t) * Math.sin(f)];
          P.push(v[0] + s * u[0], v[1] + s * u[1], v[2] + s * u[2]);
          N.push(...u);
        }
      for (let i = 0; i < rows; i++)
        for (let j = 0; j < cols; j++) {
          const a = start + i * (cols + 1) + j, b = a + cols + 1;
          I.push(a, b, a + 1, a + 1, b, b + 1);
        }
    } else {
      const [P, N, I] = floors, start = P.length / 3, t0 = cam.target;
      const k = v[0] * t0[0] + v[1] * t0[1] + v[2] * t0[2] - s;
      const base = [0, 1, 2].map((i) => t0[i] - k * v[i]);
      const a = Math.abs(v[0]) < 0.9 ? [1, 0, 0] : [0, 1, 0];
      const e1 = [v[1] * a[2] - v[2] * a[1], v[2] * a[0] - v[0] * a[2], v[0] * a[1] - v[1] * a[0]];
      const l1 = Math.hypot(...e1);
      for (let i = 0; i < 3; i++) e1[i] /= l1;
      const e2 = [v[1] * e1[2] - v[2] * e1[1], v[2] * e1[0] - v[0] * e1[2], v[0] * e1[1] - v[1] * e1[0]];
      const h = 0.6 * cam.distance;
      for (const [x, y] of [[1, 1], [-1, 1], [-1, -1], [1, -1]]) {
        P.push(...[0, 1, 2].map((i) => base[i] + h * (x * e1[i] + y * e2[i])));
        N.push(...v);
      }
      I.push(start, start + 1, start + 2, start, start + 2, start + 3);
    }
  }
  const pack = ([P, N, I]) => [new Float32Array(P), new Float32Array(N), new Uint32Array(I)];
  return [pack(balls), pack(floors)];
}

// Clear to white and draw the faces of S (its current positions), the spheres, the
// collider triangles and the planes (translucent, last, without writing depth).
function drawGL(G, cam, S, W, H, dpr, eye) {
  const gl = G.gl;
  gl.viewport(0, 0, W * dpr, H * dpr);
  gl.clearColor(1, 1, 1, 1);
  gl.clear(gl.COLOR_BUFFER_BIT | gl.DEPTH_BUFFER_BIT);
  gl.enable(gl.DEPTH_TEST);
  gl.useProgram(G.program);
  const u = G.uniforms;
  gl.uniform3fv(u.target, cam.target);
  gl.uniform3fv(u.eye, eye);
  gl.uniform2f(u.angles, cam.yaw, cam.pitch);
  gl.uniform2f(u.lens, cam.distance, H / 2 / Math.tan(cam.fov / 2));
  gl.uniform2f(u.size, W, H);
  gl.uniform2f(u.range, 0.01 * cam.distance, 20 * cam.distance);
  if (S.faces.length) {
    glUpload(G, G.faces, S.pos, vertexNormals(S.pos, S.faces, S.nodes), G.facesOf === S.faces ? null : S.faces);
    G.facesOf = S.faces;
    glDraw(G, G.faces, CLOTH, 1);
  }
  const [balls, floors] = colliderMeshes(S.colliders, cam);
  glUpload(G, G.extra, ...balls);
  glDraw(G, G.extra, BALL, 1);
  if (G.shapesOf !== S.triangles) { // uploaded when a scene message brings new ones
    glUpload(G, G.shapes, ...triangleMesh(S.triangles, S.dim));
    G.shapesOf = S.triangles;
  }
  glDraw(G, G.shapes, BALL, 1);
  gl.enable(gl.BLEND);
  // the canvas stays opaque (its alpha 1): the page composites it as premultiplied
  gl.blendFuncSeparate(gl.SRC_ALPHA, gl.ONE_MINUS_SRC_ALPHA, gl.ZERO, gl.ONE);
  gl.depthMask(false);
  glUpload(G, G.extra, ...floors);
  glDraw(G, G.extra, FLOOR, 0.35);
  gl.depthMask(true);
  gl.disable(gl.BLEND);
}
