"""The ```` ```rune ```` examples of upstream Rune's ``std::collections`` doc comments
(``crates/rune/src/modules/collections/{hash_map,hash_set,vec_deque}.rs`` at rune-rs/rune
54fe7cb8), each run through the compiler as a file of top-level statements; a ``should_panic``
example must fail with a panic or runtime error. The example sources are upstream's
(MIT / Apache-2.0, see ``corpus/LICENSE-RUNE-*``); each test id names the item it documents."""

from __future__ import annotations

import io

import pytest
from toolmesh.plugins.rune.lang import RuneRuntimeError, compile_source

EXAMPLES = [
    pytest.param(
        """\
use std::collections::HashMap;

enum Tile {
    Wall,
}

let m = HashMap::new();

m.insert((0, 1), Tile::Wall);
m[(0, 3)] = 5;

assert_eq!(m.get((0, 1)), Some(Tile::Wall));
assert_eq!(m.get((0, 2)), None);
assert_eq!(m[(0, 3)], 5);
""",
        False,
        id="hash_map::HashMap",
    ),
    pytest.param(
        """\
use std::collections::HashMap;
let map = HashMap::new();
""",
        False,
        id="hash_map::HashMap::new",
    ),
    pytest.param(
        """\
use std::collections::HashMap;
let map = HashMap::with_capacity(10);
""",
        False,
        id="hash_map::HashMap::with_capacity",
    ),
    pytest.param(
        """\
use std::collections::HashMap;

let a = HashMap::new();
assert_eq!(a.len(), 0);
a.insert(1, "a");
assert_eq!(a.len(), 1);
""",
        False,
        id="hash_map::HashMap::len",
    ),
    pytest.param(
        """\
use std::collections::HashMap;
let map = HashMap::with_capacity(100);
assert!(map.capacity() >= 100);
""",
        False,
        id="hash_map::HashMap::capacity",
    ),
    pytest.param(
        """\
use std::collections::HashMap;

let a = HashMap::new();
assert!(a.is_empty());
a.insert(1, "a");
assert!(!a.is_empty());
""",
        False,
        id="hash_map::HashMap::is_empty",
    ),
    pytest.param(
        """\
use std::collections::HashMap;

let map = HashMap::new();
assert_eq!(map.insert(37, "a"), None);
assert_eq!(map.is_empty(), false);

map.insert(37, "b");
assert_eq!(map.insert(37, "c"), Some("b"));
assert_eq!(map[37], "c");
""",
        False,
        id="hash_map::HashMap::insert",
    ),
    pytest.param(
        """\
use std::collections::HashMap;

let map = HashMap::new();
map.insert(1, "a");
assert_eq!(map.get(1), Some("a"));
assert_eq!(map.get(2), None);
""",
        False,
        id="hash_map::HashMap::get",
    ),
    pytest.param(
        """\
use std::collections::HashMap;

let map = HashMap::new();
map.insert(1, "a");
assert_eq!(map.contains_key(1), true);
assert_eq!(map.contains_key(2), false);
""",
        False,
        id="hash_map::HashMap::contains_key",
    ),
    pytest.param(
        """\
use std::collections::HashMap;

let map = HashMap::new();
map.insert(1, "a");
assert_eq!(map.remove(1), Some("a"));
assert_eq!(map.remove(1), None);
""",
        False,
        id="hash_map::HashMap::remove",
    ),
    pytest.param(
        """\
use std::collections::HashMap;

let a = HashMap::new();
a.insert(1, "a");
a.clear();
assert!(a.is_empty());
""",
        False,
        id="hash_map::HashMap::clear",
    ),
    pytest.param(
        """\
use std::collections::HashMap;

let map = HashMap::from_iter([
    ("a", 1),
    ("b", 2),
    ("c", 3),
]);

let pairs = map.iter().collect::<Vec>();
pairs.sort();
assert_eq!(pairs, [("a", 1), ("b", 2), ("c", 3)]);
""",
        False,
        id="hash_map::HashMap::iter",
    ),
    pytest.param(
        """\
use std::collections::HashMap;

let map = HashMap::from_iter([
    ("a", 1),
    ("b", 2),
    ("c", 3),
]);

let keys = map.keys().collect::<Vec>();
keys.sort();
assert_eq!(keys, ["a", "b", "c"]);
""",
        False,
        id="hash_map::HashMap::keys",
    ),
    pytest.param(
        """\
use std::collections::HashMap;

let map = HashMap::from_iter([
    ("a", 1),
    ("b", 2),
    ("c", 3),
]);

let values = map.values().collect::<Vec>();
values.sort();
assert_eq!(values, [1, 2, 3]);
""",
        False,
        id="hash_map::HashMap::values",
    ),
    pytest.param(
        """\
use std::collections::HashMap;

let map = HashMap::new();

map.extend([
    ("a", 1),
    ("b", 2),
    ("c", 3),
]);
""",
        False,
        id="hash_map::HashMap::extend",
    ),
    pytest.param(
        """\
use std::collections::HashMap;

let a = HashMap::from_iter([
    ("a", 1),
    ("b", 2),
]);

let b = a.clone();

b.insert("c", 3);

assert_eq!(a.len(), 2);
assert_eq!(b.len(), 3);
""",
        False,
        id="hash_map::HashMap::clone",
    ),
    pytest.param(
        """\
use std::collections::HashMap;

let map = HashMap::from_iter([("a", 1), ("b", 2)]);
assert_eq!(map.len(), 2);
assert_eq!(map.get("a"), Some(1));
assert_eq!(map.get("b"), Some(2));
""",
        False,
        id="hash_map::HashMap::from_iter",
    ),
    pytest.param(
        """\
use std::collections::HashMap;

let map = HashMap::new();
map[37] = "a";
assert!(!map.is_empty());

map[37] = "c";
assert_eq!(map[37], "c");
""",
        False,
        id="hash_map::HashMap::index_set",
    ),
    pytest.param(
        """\
use std::collections::HashMap;

let map = HashMap::new();
let _ = map[1];
""",
        True,
        id="hash_map::HashMap::index_get#1",
    ),
    pytest.param(
        """\
use std::collections::HashMap;

let map = HashMap::new();
map[1] = "a";
assert_eq!(map[1], "a");
""",
        False,
        id="hash_map::HashMap::index_get#2",
    ),
    pytest.param(
        """\
use std::collections::HashMap;

let map = HashMap::new();
map[1] = "a";

assert_eq!(format!("{:?}", map), "{1: \\"a\\"}");
""",
        False,
        id="hash_map::HashMap::debug_fmt",
    ),
    pytest.param(
        """\
use std::collections::HashMap;

let map1 = HashMap::from_iter([
    ("a", 1.0),
    ("c", 3.0),
    ("b", 2.0),
]);

let map2 = HashMap::from_iter([
    ("c", 3.0),
    ("a", 1.0),
    ("b", 2.0),
]);

assert!(map1 == map2);

map1["b"] = f64::NAN;
map2["b"] = f64::NAN;

assert!(map1 != map2);
""",
        False,
        id="hash_map::HashMap::partial_eq",
    ),
    pytest.param(
        """\
use std::collections::HashMap;
use std::ops::eq;

let map1 = HashMap::from_iter([
    ("a", 1),
    ("c", 3),
    ("b", 2),
]);

let map2 = HashMap::from_iter([
    ("c", 3),
    ("a", 1),
    ("b", 2),
]);

assert!(eq(map1, map2));
""",
        False,
        id="hash_map::HashMap::eq",
    ),
    pytest.param(
        """\
use std::collections::HashMap;

let map = HashMap::from_iter([
    ("a", 1),
    ("b", 2),
    ("c", 3),
]);

let pairs = [];

for pair in map {
    pairs.push(pair);
}

pairs.sort();
assert_eq!(pairs, [("a", 1), ("b", 2), ("c", 3)]);
""",
        False,
        id="hash_map::HashMap::into_iter",
    ),
    pytest.param(
        """\
use std::collections::HashSet;

enum Tile {
    Wall,
}

let m = HashSet::new();

m.insert((0, 1));

assert!(m.contains((0, 1)));
assert!(!m.contains((0, 2)));
""",
        False,
        id="hash_set::HashSet",
    ),
    pytest.param(
        """\
use std::collections::HashSet;

let set = HashSet::new();
""",
        False,
        id="hash_set::HashSet::new",
    ),
    pytest.param(
        """\
use std::collections::HashSet;

let set = HashSet::with_capacity(10);
assert!(set.capacity() >= 10);
""",
        False,
        id="hash_set::HashSet::with_capacity",
    ),
    pytest.param(
        """\
use std::collections::HashSet;

let v = HashSet::new();
assert_eq!(v.len(), 0);
v.insert(1);
assert_eq!(v.len(), 1);
""",
        False,
        id="hash_set::HashSet::len",
    ),
    pytest.param(
        """\
use std::collections::HashSet;

let v = HashSet::new();
assert!(v.is_empty());
v.insert(1);
assert!(!v.is_empty());
""",
        False,
        id="hash_set::HashSet::is_empty",
    ),
    pytest.param(
        """\
use std::collections::HashSet;

let set = HashSet::with_capacity(100);
assert!(set.capacity() >= 100);
""",
        False,
        id="hash_set::HashSet::capacity",
    ),
    pytest.param(
        """\
use std::collections::HashSet;

let set = HashSet::new();

assert_eq!(set.insert(2), true);
assert_eq!(set.insert(2), false);
assert_eq!(set.len(), 1);
""",
        False,
        id="hash_set::HashSet::insert",
    ),
    pytest.param(
        """\
use std::collections::HashSet;

let set = HashSet::new();

set.insert(2);
assert_eq!(set.remove(2), true);
assert_eq!(set.remove(2), false);
""",
        False,
        id="hash_set::HashSet::remove",
    ),
    pytest.param(
        """\
use std::collections::HashSet;

let set = HashSet::from_iter([1, 2, 3]);

assert!(set.contains(1));
assert!(!set.contains(4));
""",
        False,
        id="hash_set::HashSet::contains",
    ),
    pytest.param(
        """\
use std::collections::HashSet;

let v = HashSet::new();
v.insert(1);
v.clear();
assert!(v.is_empty());
""",
        False,
        id="hash_set::HashSet::clear",
    ),
    pytest.param(
        """\
use std::collections::HashSet;

let a = HashSet::from_iter([1, 2, 3]);
let b = HashSet::from_iter([4, 2, 3, 4]);

let diff = a.difference(b).collect::<HashSet>();
assert_eq!(diff, [1].iter().collect::<HashSet>());

// Note that difference is not symmetric,
// and `b - a` means something else:
let diff = b.difference(a).collect::<HashSet>();
assert_eq!(diff, [4].iter().collect::<HashSet>());
""",
        False,
        id="hash_set::HashSet::difference",
    ),
    pytest.param(
        """\
use std::collections::HashSet;

let a = HashSet::from_iter([1, 2, 3]);
let b = HashSet::from_iter([4, 2, 3, 4]);

let values = a.intersection(b).collect::<HashSet>();
assert_eq!(values, [2, 3].iter().collect::<HashSet>());
""",
        False,
        id="hash_set::HashSet::intersection",
    ),
    pytest.param(
        """\
use std::collections::HashSet;

let a = HashSet::from_iter([1, 2, 3]);
let b = HashSet::from_iter([4, 2, 3, 4]);

let union = a.union(b).collect::<HashSet>();
assert_eq!(union, HashSet::from_iter([1, 2, 3, 4]));

let union = b.union(a).collect::<HashSet>();
assert_eq!(union, HashSet::from_iter([1, 2, 3, 4]));
""",
        False,
        id="hash_set::HashSet::union",
    ),
    pytest.param(
        """\
use std::collections::HashSet;

let set = HashSet::from_iter([3, 2, 1]);
let vec = set.iter().collect::<Vec>();
vec.sort();
assert_eq!(vec, [1, 2, 3]);
""",
        False,
        id="hash_set::HashSet::iter",
    ),
    pytest.param(
        """\
use std::collections::HashSet;

let set = HashSet::from_iter([3, 2, 1]);
let vec = [];

for value in set {
    vec.push(value);
}

vec.sort();
assert_eq!(vec, [1, 2, 3]);
""",
        False,
        id="hash_set::HashSet::into_iter",
    ),
    pytest.param(
        """\
use std::collections::HashSet;

let set = HashSet::from_iter([1, 2, 3]);
println!("{:?}", set);
""",
        False,
        id="hash_set::HashSet::debug_fmt",
    ),
    pytest.param(
        """\
use std::collections::HashSet;

let set = HashSet::from_iter(["a", "b"]);
assert_eq!(set.len(), 2);
assert!(set.contains("a"));
assert!(set.contains("b"));
""",
        False,
        id="hash_set::HashSet::from_iter",
    ),
    pytest.param(
        """\
use std::collections::HashSet;

let set = HashSet::from_iter([1, 2, 3]);
assert_eq!(set, HashSet::from_iter([1, 2, 3]));
assert_ne!(set, HashSet::from_iter([2, 3, 4]));
""",
        False,
        id="hash_set::HashSet::partial_eq",
    ),
    pytest.param(
        """\
use std::ops::eq;
use std::collections::HashSet;

let set = HashSet::from_iter([1, 2, 3]);
assert!(eq(set, HashSet::from_iter([1, 2, 3])));
assert!(!eq(set, HashSet::from_iter([2, 3, 4])));
""",
        False,
        id="hash_set::HashSet::eq",
    ),
    pytest.param(
        """\
use std::collections::VecDeque;

let deq = VecDeque::from::<Vec>([-1, 0, 1]);
""",
        False,
        id="vec_deque::VecDeque",
    ),
    pytest.param(
        """\
use std::collections::VecDeque;

let deque = VecDeque::new();
""",
        False,
        id="vec_deque::VecDeque::new",
    ),
    pytest.param(
        """\
use std::collections::VecDeque;

let deque = VecDeque::with_capacity(10);
assert!(deque.capacity() >= 10);
""",
        False,
        id="vec_deque::VecDeque::with_capacity",
    ),
    pytest.param(
        """\
use std::collections::VecDeque;

let deque = VecDeque::new();
deque.extend([1, 2, 3]);

assert_eq!(Some(1), deque.pop_front());
assert_eq!(Some(3), deque.pop_back());
""",
        False,
        id="vec_deque::VecDeque::extend",
    ),
    pytest.param(
        """\
use std::collections::VecDeque;

let d = VecDeque::new();
assert_eq!(d.front(), None);

d.push_back(1);
d.push_back(2);
assert_eq!(d.front(), Some(1));
""",
        False,
        id="vec_deque::VecDeque::front",
    ),
    pytest.param(
        """\
use std::collections::VecDeque;

let d = VecDeque::new();
assert_eq!(d.back(), None);

d.push_back(1);
d.push_back(2);
assert_eq!(d.back(), Some(2));
""",
        False,
        id="vec_deque::VecDeque::back",
    ),
    pytest.param(
        """\
use std::collections::VecDeque;

let buf = VecDeque::new();
buf.push_back(1);
buf.push_back(3);
assert_eq!(Some(3), buf.back());
""",
        False,
        id="vec_deque::VecDeque::push_back",
    ),
    pytest.param(
        """\
use std::collections::VecDeque;

let d = VecDeque::new();
d.push_front(1);
d.push_front(2);
assert_eq!(d.front(), Some(2));
""",
        False,
        id="vec_deque::VecDeque::push_front",
    ),
    pytest.param(
        """\
use std::collections::VecDeque;

let d = VecDeque::new();
d.push_back(1);
d.push_back(2);

assert_eq!(d.pop_front(), Some(1));
assert_eq!(d.pop_front(), Some(2));
assert_eq!(d.pop_front(), None);
""",
        False,
        id="vec_deque::VecDeque::pop_front",
    ),
    pytest.param(
        """\
use std::collections::VecDeque;

let buf = VecDeque::new();
assert_eq!(buf.pop_back(), None);
buf.push_back(1);
buf.push_back(3);
assert_eq!(buf.pop_back(), Some(3));
""",
        False,
        id="vec_deque::VecDeque::pop_back",
    ),
    pytest.param(
        """\
use std::collections::VecDeque;

let buf = VecDeque::from::<Vec>([1]);
buf.reserve(10);
assert!(buf.capacity() >= 11);
""",
        False,
        id="vec_deque::VecDeque::reserve",
    ),
    pytest.param(
        """\
use std::collections::VecDeque;

let deque = VecDeque::new();
assert_eq!(deque.len(), 0);
deque.push_back(1);
assert_eq!(deque.len(), 1);
""",
        False,
        id="vec_deque::VecDeque::len",
    ),
    pytest.param(
        """\
use std::collections::VecDeque;

let buf = VecDeque::with_capacity(10);
assert!(buf.capacity() >= 10);
""",
        False,
        id="vec_deque::VecDeque::capacity",
    ),
    pytest.param(
        """\
use std::collections::VecDeque;

let buf = VecDeque::new();
buf.push_back('a');
buf.push_back('b');
buf.push_back('c');
assert_eq!(buf, ['a', 'b', 'c']);

buf.insert(1, 'd');
assert_eq!(buf, ['a', 'd', 'b', 'c']);
""",
        False,
        id="vec_deque::VecDeque::insert",
    ),
    pytest.param(
        """\
use std::collections::VecDeque;

let buf = VecDeque::new();
buf.push_back(1);
buf.push_back(2);
buf.push_back(3);
assert_eq!(buf, [1, 2, 3]);

assert_eq!(buf.remove(1), Some(2));
assert_eq!(buf, [1, 3]);
""",
        False,
        id="vec_deque::VecDeque::remove",
    ),
    pytest.param(
        """\
use std::collections::VecDeque;

let buf = (0..10).iter().collect::<VecDeque>();

buf.rotate_left(3);
assert_eq!(buf, [3, 4, 5, 6, 7, 8, 9, 0, 1, 2]);

for i in 1..10 {
    assert_eq!(i * 3 % 10, buf[0]);
    buf.rotate_left(3);
}

assert_eq!(buf, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
""",
        False,
        id="vec_deque::VecDeque::rotate_left",
    ),
    pytest.param(
        """\
use std::collections::VecDeque;

let buf = (0..10).iter().collect::<VecDeque>();

buf.rotate_right(3);
assert_eq!(buf, [7, 8, 9, 0, 1, 2, 3, 4, 5, 6]);

for i in 1..10 {
    assert_eq!(0, buf[i * 3 % 10]);
    buf.rotate_right(3);
}

assert_eq!(buf, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
""",
        False,
        id="vec_deque::VecDeque::rotate_right",
    ),
    pytest.param(
        """\
use std::collections::VecDeque;

let buf = VecDeque::new();
buf.push_back(5);
buf.push_back(3);
buf.push_back(4);

assert_eq!([5, 3, 4], buf.iter());
assert_eq!([4, 3, 5], buf.iter().rev());
""",
        False,
        id="vec_deque::VecDeque::iter",
    ),
    pytest.param(
        """\
use std::collections::VecDeque;

let deque = VecDeque::from_iter(["a", "b", "c"]);
assert_eq!(deque.len(), 3);
assert_eq!(deque.pop_front(), Some("a"));
assert_eq!(deque.pop_back(), Some("c"));
assert_eq!(deque.len(), 1);
""",
        False,
        id="vec_deque::VecDeque::from_iter",
    ),
    pytest.param(
        """\
use std::collections::VecDeque;

let deque = VecDeque::from::<Vec>([1, 2, 3]);
assert_eq!(format!("{:?}", deque), "[1, 2, 3]");
""",
        False,
        id="vec_deque::VecDeque::debug_fmt",
    ),
    pytest.param(
        """\
use std::collections::VecDeque;

let deque = VecDeque::from::<Vec>([1, 2, 3]);

assert!(deque == [1, 2, 3]);
assert!(deque == (1..=3));
assert!(deque != [2, 3, 4]);
""",
        False,
        id="vec_deque::VecDeque::partial_eq",
    ),
    pytest.param(
        """\
use std::collections::VecDeque;
use std::ops::eq;

let deque = VecDeque::from::<Vec>([1, 2, 3]);

assert!(eq(deque, VecDeque::from::<Vec>([1, 2, 3])));
assert!(!eq(deque, VecDeque::from::<Vec>([2, 3, 4])));
""",
        False,
        id="vec_deque::VecDeque::eq",
    ),
    pytest.param(
        """\
use std::collections::VecDeque;

let deque = VecDeque::from::<Vec>([1, 2, 3]);

assert!(deque > VecDeque::from::<Vec>([0, 2, 3]));
assert!(deque < VecDeque::from::<Vec>([2, 2, 3]));
""",
        False,
        id="vec_deque::VecDeque::partial_cmp",
    ),
    pytest.param(
        """\
use std::collections::VecDeque;
use std::cmp::Ordering;
use std::ops::cmp;

let deque = VecDeque::from::<Vec>([1, 2, 3]);

assert_eq!(cmp(deque, VecDeque::from::<Vec>([0, 2, 3])), Ordering::Greater);
assert_eq!(cmp(deque, VecDeque::from::<Vec>([2, 2, 3])), Ordering::Less);
""",
        False,
        id="vec_deque::VecDeque::cmp",
    ),
    pytest.param(
        """\
use std::collections::VecDeque;

let buf = VecDeque::from::<Vec>([1, 2, 3]);
""",
        False,
        id="vec_deque::VecDeque::from",
    ),
]


@pytest.mark.parametrize(("source", "should_panic"), EXAMPLES)
def test_upstream_doc_example(source: str, should_panic: bool) -> None:
    unit = compile_source(source, "example.rn")
    out = io.StringIO()
    if should_panic:
        with pytest.raises(RuneRuntimeError):
            unit.call("main", stdout=out)
    else:
        unit.call("main", stdout=out)


def test_every_collection_item_with_an_example_is_covered() -> None:
    ids = {p.id.split("#")[0] for p in EXAMPLES}
    assert len(EXAMPLES) == 68
    for item in ("HashMap::index_get", "HashSet::union", "VecDeque::rotate_left", "VecDeque::from"):
        assert any(i.endswith(item) for i in ids), item
