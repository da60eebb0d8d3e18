//! `tree!`: JSON-like literals for the objects components build, with `json!`'s syntax but
//! without its copies. `serde_json::json!` serialises every interpolated expression by reference,
//! so a subtree built elsewhere is deep-copied and the original dropped; `tree!` moves owned
//! values in (see `IntoTree`) and copies only what it is given by reference.
//!
//! Syntax: `null`, `[...]`, `{"key": value, ...}` nest as in `json!`; a key is any expression a
//! `String` can be made from; anything else is a Rust expression of a type that implements
//! `IntoTree`.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

macro_rules! tree {
    (null) => { serde_json::Value::Null };
    ([]) => { serde_json::Value::Array(Vec::new()) };
    ([ $($items:tt)+ ]) => { serde_json::Value::Array(tree!(@array [] $($items)+)) };
    ({}) => { serde_json::Value::Object(serde_json::Map::new()) };
    ({ $($entries:tt)+ }) => {{
        let mut object = serde_json::Map::new();
        tree!(@object object $($entries)+);
        serde_json::Value::Object(object)
    }};
    ($other:expr) => { $crate::components::tree::IntoTree::into_tree($other) };

    // Array items, one at a time; the finished ones are collected in the brackets.
    (@array [$($done:expr,)*]) => { vec![$($done,)*] };
    (@array [$($done:expr,)*] null $(, $($rest:tt)*)?) => {
        tree!(@array [$($done,)* serde_json::Value::Null,] $($($rest)*)?)
    };
    (@array [$($done:expr,)*] [$($inner:tt)*] $(, $($rest:tt)*)?) => {
        tree!(@array [$($done,)* tree!([$($inner)*]),] $($($rest)*)?)
    };
    (@array [$($done:expr,)*] {$($inner:tt)*} $(, $($rest:tt)*)?) => {
        tree!(@array [$($done,)* tree!({$($inner)*}),] $($($rest)*)?)
    };
    (@array [$($done:expr,)*] $item:expr $(, $($rest:tt)*)?) => {
        tree!(@array [$($done,)* tree!($item),] $($($rest)*)?)
    };

    // Object entries, one at a time, inserted into the map named first: the key's tokens are
    // gathered up to the colon, then the value is read.
    (@object $m:ident) => {};
    (@object $m:ident $($rest:tt)+) => { tree!(@key $m [] $($rest)+) };
    (@key $m:ident [$($key:tt)+] : null $(, $($rest:tt)*)?) => {
        $m.insert(String::from($($key)+), serde_json::Value::Null);
        $( tree!(@object $m $($rest)*); )?
    };
    (@key $m:ident [$($key:tt)+] : [$($inner:tt)*] $(, $($rest:tt)*)?) => {
        $m.insert(String::from($($key)+), tree!([$($inner)*]));
        $( tree!(@object $m $($rest)*); )?
    };
    (@key $m:ident [$($key:tt)+] : {$($inner:tt)*} $(, $($rest:tt)*)?) => {
        $m.insert(String::from($($key)+), tree!({$($inner)*}));
        $( tree!(@object $m $($rest)*); )?
    };
    (@key $m:ident [$($key:tt)+] : $value:expr $(, $($rest:tt)*)?) => {
        $m.insert(String::from($($key)+), tree!($value));
        $( tree!(@object $m $($rest)*); )?
    };
    (@key $m:ident [$($key:tt)*] $next:tt $($rest:tt)*) => {
        tree!(@key $m [$($key)* $next] $($rest)*)
    };
}

/// What `tree!` accepts where a value goes: owned values are moved in, borrowed ones copied.
pub trait IntoTree {
    fn into_tree(self) -> Value;
}

impl IntoTree for Value {
    fn into_tree(self) -> Value {
        self
    }
}

impl IntoTree for &Value {
    fn into_tree(self) -> Value {
        self.clone()
    }
}

impl IntoTree for Map<String, Value> {
    fn into_tree(self) -> Value {
        Value::Object(self)
    }
}

impl IntoTree for String {
    fn into_tree(self) -> Value {
        Value::String(self)
    }
}

impl IntoTree for &String {
    fn into_tree(self) -> Value {
        Value::String(self.clone())
    }
}

impl IntoTree for &str {
    fn into_tree(self) -> Value {
        Value::String(self.to_string())
    }
}

impl IntoTree for bool {
    fn into_tree(self) -> Value {
        Value::Bool(self)
    }
}

macro_rules! numbers {
    ($($t:ty),*) => {$(
        impl IntoTree for $t {
            fn into_tree(self) -> Value {
                Value::from(self)
            }
        }
    )*};
}
numbers!(i32, i64, u16, u32, u64, usize, f64);

impl<T: IntoTree> IntoTree for Option<T> {
    fn into_tree(self) -> Value {
        self.map_or(Value::Null, IntoTree::into_tree)
    }
}

impl<T: IntoTree> IntoTree for Vec<T> {
    fn into_tree(self) -> Value {
        Value::Array(self.into_iter().map(IntoTree::into_tree).collect())
    }
}

impl<T: IntoTree, const N: usize> IntoTree for [T; N] {
    fn into_tree(self) -> Value {
        Value::Array(self.into_iter().map(IntoTree::into_tree).collect())
    }
}

impl<T: IntoTree + Clone> IntoTree for &[T] {
    fn into_tree(self) -> Value {
        Value::Array(self.iter().cloned().map(IntoTree::into_tree).collect())
    }
}

impl<T: IntoTree> IntoTree for BTreeMap<String, T> {
    fn into_tree(self) -> Value {
        Value::Object(self.into_iter().map(|(k, v)| (k, v.into_tree())).collect())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    /// `tree!` builds what `json!` builds, for every form.
    #[test]
    fn tree_builds_what_json_builds() {
        let name = String::from("cilium");
        let labels = json!({"k8s-app": "cilium"});
        let ports = vec![json!(1), json!(2)];
        let none: Option<&str> = None;
        let key = "dynamic";
        let built = tree!({
            "name": &name,
            "labels": labels.clone(),
            "empty": {},
            "emptyList": [],
            "nothing": null,
            "maybe": none,
            "flags": [true, false, null, "x", 1.5, [], {}],
            "nested": {"ports": ports.clone(), "count": 3, "list": [{"a": 1}, [2]]},
            key: name.len(),
            format!("{key}-too"): name.as_str(),
        });
        let expected = json!({
            "name": name,
            "labels": labels,
            "empty": {},
            "emptyList": [],
            "nothing": null,
            "maybe": none,
            "flags": [true, false, null, "x", 1.5, [], {}],
            "nested": {"ports": ports, "count": 3, "list": [{"a": 1}, [2]]},
            "dynamic": 6,
            "dynamic-too": "cilium",
        });
        assert_eq!(built, expected);
        assert_eq!(tree!(null), json!(null));
        assert_eq!(tree!(["a", null,]), json!(["a", null]));
    }
}
