"""System.bodies(): the connected pieces that springs and faces join, checked against
a breadth-first search written here."""

from collections import deque

import numpy as np
import pytest

import springsim as ss


def pieces_by_search(n, links):
    """Labels 0, 1, ... in the order of each piece's first node, by BFS."""
    near = [[] for _ in range(n)]
    for a, b in links:
        near[a].append(b)
        near[b].append(a)
    label = [-1] * n
    count = 0
    for start in range(n):
        if label[start] >= 0:
            continue
        label[start] = count
        queue = deque([start])
        while queue:
            i = queue.popleft()
            for j in near[i]:
                if label[j] < 0:
                    label[j] = count
                    queue.append(j)
        count += 1
    return np.array(label)


@pytest.mark.parametrize("seed", range(12))
def test_bodies_match_a_breadth_first_search_on_random_graphs(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 300))
    sim = ss.System(dim=3)
    sim.add_nodes(rng.random((n, 3)))
    pairs = rng.integers(0, n, (int(rng.integers(0, n + 40)), 2))
    pairs = np.unique(np.sort(pairs[pairs[:, 0] != pairs[:, 1]], axis=1), axis=0)
    if len(pairs):
        sim.add_springs(pairs, stiffness=1.0)
    links = [tuple(p) for p in pairs]
    if n >= 3 and seed % 2:  # faces join their corners even with no spring
        tri = rng.integers(0, n, (5, 3))
        tri = tri[(tri[:, 0] != tri[:, 1]) & (tri[:, 1] != tri[:, 2]) & (tri[:, 0] != tri[:, 2])]
        if len(tri):
            sim.add_faces(tri)
            links += [(t[a], t[(a + 1) % 3]) for t in tri for a in range(3)]
    np.testing.assert_array_equal(sim.bodies(), pieces_by_search(n, links))


def test_an_added_system_is_the_next_body_and_a_lone_node_is_its_own():
    sim = ss.cloth(6, 5, width=1.0, height=1.0, mass=1.0, stiffness=10.0)
    sim.add(ss.cloth(3, 3, width=1.0, height=1.0, mass=1.0, stiffness=10.0))
    sim.add_nodes([[5.0, 5.0, 5.0]])
    assert np.bincount(sim.bodies()).tolist() == [30, 9, 1]
    assert ss.System(dim=2).bodies().shape == (0,)
