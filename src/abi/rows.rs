//! The rows the C layout checks print (`size <struct> <bytes>`, `field <struct>.<name>
//! <offset>[ <bytes>]`, `const <NAME> <value>`), written for a Rust mirror so a test can compare
//! the two. One macro per row kind, shared by every mirror (src/abi/ibgda.rs, src/ib/sys.rs,
//! src/ibgda/mlx5.rs), each naming its fields once.

/// Pushes onto the vector `$v` the `size` row of struct `$t` (called `$name` in C) and one
/// `field` row per listed field; after `sized`, each field row also gives the field's size.
macro_rules! layout_rows {
    ($v:ident, $t:ty, $name:literal, [$($f:ident),* $(,)?]) => {
        $v.push(format!("size {} {}", $name, std::mem::size_of::<$t>()));
        $( $v.push(format!("field {}.{} {}", $name, stringify!($f), std::mem::offset_of!($t, $f))); )*
    };
    (sized $v:ident, $t:ty, $name:literal, [$($f:ident),* $(,)?]) => {
        $v.push(format!("size {} {}", $name, std::mem::size_of::<$t>()));
        $( $v.push(format!(
            "field {}.{} {} {}",
            $name,
            stringify!($f),
            std::mem::offset_of!($t, $f),
            $crate::abi::rows::field_size(|s: &$t| &s.$f)
        )); )*
    };
}
pub(crate) use layout_rows;

/// `[(C name, value)]` of constants whose C name is `$prefix` followed by their Rust name.
macro_rules! const_rows {
    ($prefix:literal, [$($c:ident),* $(,)?]) => {
        [$((concat!($prefix, stringify!($c)), $c as u64)),*]
    };
}
pub(crate) use const_rows;

/// The size of the field that `get` borrows (no value of `T` is needed: the closure is never
/// called).
pub fn field_size<T, F>(_get: impl Fn(&T) -> &F) -> usize {
    std::mem::size_of::<F>()
}
