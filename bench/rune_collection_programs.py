"""The ``std::collections`` programs of ``rune_vs_python.py``, each beside its CPython twin: word
frequencies over 200,000 words (200 lines of 1,000) with a ``HashMap`` (then the top 10), and breadth-first searches
with a ``VecDeque`` over a 10,000-node graph. The twins follow the Rune programs statement by
statement (the same text, graph and top-10 insertion), with ``dict`` and ``collections.deque``."""

from __future__ import annotations

from collections import deque

WORD_FREQUENCIES = """
use std::collections::HashMap;

fn vocabulary() {
    let syllables = ["ka", "lo", "mi", "ne", "ru", "ta", "shi", "po", "ve", "da"];
    let vocab = [];
    for i in 0..2000 {
        let w = String::new();
        let k = i;
        loop {
            w.push_str(syllables[k % 10]);
            k = k / 10;
            if k == 0 { break; }
        }
        vocab.push(w);
    }
    vocab
}

fn main() {
    let vocab = vocabulary();
    let counts = HashMap::new();
    let seed = 42;
    for line in 0..200 {
        let words = [];
        for _ in 0..1000 {
            seed = (seed * 1103515245 + 12345) % 2147483648;
            let x = (seed / 65536) % 2000;
            words.push(vocab[x * x / 2000]);
        }
        let text = words.join(" ");
        for w in text.split_whitespace() {
            match counts.get(w) {
                Some(c) => counts.insert(w, c + 1),
                None => counts.insert(w, 1),
            };
        }
    }
    let top = [];
    for (w, c) in counts {
        if top.len() == 10 {
            let last = top[9];
            if c < last.1 || (c == last.1 && w > last.0) { continue; }
            top.pop();
        }
        let i = top.len();
        while i > 0 && (top[i - 1].1 < c || (top[i - 1].1 == c && top[i - 1].0 > w)) {
            i -= 1;
        }
        top.insert(i, (w, c));
    }
    top.iter().map(|(w, c)| `${w}=${c}`).collect::<Vec>().join(",")
}
"""


def _vocabulary() -> list[str]:
    syllables = ["ka", "lo", "mi", "ne", "ru", "ta", "shi", "po", "ve", "da"]
    vocab = []
    for i in range(2000):
        w = ""
        k = i
        while True:
            w += syllables[k % 10]
            k = k // 10
            if k == 0:
                break
        vocab.append(w)
    return vocab


def word_frequencies() -> str:
    vocab = _vocabulary()
    counts: dict[str, int] = {}
    seed = 42
    for _line in range(200):
        words = []
        for _ in range(1000):
            seed = (seed * 1103515245 + 12345) % 2147483648
            x = (seed // 65536) % 2000
            words.append(vocab[x * x // 2000])
        text = " ".join(words)
        for w in text.split():
            c = counts.get(w)
            if c is not None:
                counts[w] = c + 1
            else:
                counts[w] = 1
    top: list[tuple[str, int]] = []
    for w, c in counts.items():
        if len(top) == 10:
            last = top[9]
            if c < last[1] or (c == last[1] and w > last[0]):
                continue
            top.pop()
        i = len(top)
        while i > 0 and (top[i - 1][1] < c or (top[i - 1][1] == c and top[i - 1][0] > w)):
            i -= 1
        top.insert(i, (w, c))
    return ",".join(f"{w}={c}" for w, c in top)


BFS = """
use std::collections::VecDeque;

fn graph(n) {
    let adj = [];
    for i in 0..n { adj.push([]); }
    let seed = 7;
    for i in 0..n {
        let j = (i + 1) % n;
        adj[i].push(j);
        adj[j].push(i);
        for _ in 0..2 {
            seed = (seed * 1103515245 + 12345) % 2147483648;
            let k = (seed / 65536) % n;
            adj[i].push(k);
            adj[k].push(i);
        }
    }
    adj
}

fn bfs(adj, start) {
    let dist = [];
    for _ in 0..adj.len() { dist.push(-1); }
    dist[start] = 0;
    let queue = VecDeque::new();
    queue.push_back(start);
    while let Some(u) = queue.pop_front() {
        let du = dist[u] + 1;
        for v in adj[u] {
            if dist[v] < 0 {
                dist[v] = du;
                queue.push_back(v);
            }
        }
    }
    dist
}

fn main() {
    let adj = graph(10000);
    let total = 0;
    let far = 0;
    for s in [0, 17, 4242, 9999] {
        for d in bfs(adj, s) {
            total += d;
            if d > far { far = d; }
        }
    }
    let out = [total, far];
    out
}
"""


def _graph(n: int) -> list[list[int]]:
    adj: list[list[int]] = []
    for _ in range(n):
        adj.append([])
    seed = 7
    for i in range(n):
        j = (i + 1) % n
        adj[i].append(j)
        adj[j].append(i)
        for _ in range(2):
            seed = (seed * 1103515245 + 12345) % 2147483648
            k = (seed // 65536) % n
            adj[i].append(k)
            adj[k].append(i)
    return adj


def _bfs(adj: list[list[int]], start: int) -> list[int]:
    dist = []
    for _ in range(len(adj)):
        dist.append(-1)
    dist[start] = 0
    queue = deque()
    queue.append(start)
    while queue:
        u = queue.popleft()
        du = dist[u] + 1
        for v in adj[u]:
            if dist[v] < 0:
                dist[v] = du
                queue.append(v)
    return dist


def bfs() -> list[int]:
    adj = _graph(10000)
    total = 0
    far = 0
    for s in [0, 17, 4242, 9999]:
        for d in _bfs(adj, s):
            total += d
            far = max(far, d)
    return [total, far]


RUNE = {"word frequencies": WORD_FREQUENCIES, "VecDeque BFS": BFS}
PYTHON = {"word frequencies": word_frequencies, "VecDeque BFS": bfs}
