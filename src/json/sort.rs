//! Members sorted by name, into the one order every runtime reports them
//! in, and a name found twice: in O(n log n) whatever the input.

/// Whether a name comes twice among `names`, in time linear (or n log n) in
/// their number: each of a few is compared with those before it; past
/// that, they are sorted.
pub(crate) fn any_twice<'n>(names: impl Iterator<Item = &'n str> + Clone) -> bool {
    const FEW: usize = 16;
    let mut few = [""; FEW];
    for (count, name) in names.clone().enumerate() {
        if count == FEW {
            let mut all: Vec<(&str, ())> = names.map(|name| (name, ())).collect();
            sort_by_name(&mut all);
            return all
                .windows(2)
                .any(|pair| pair.first().map(|p| p.0) == pair.last().map(|p| p.0));
        }
        if few.iter().take(count).any(|seen| *seen == name) {
            return true;
        }
        if let Some(slot) = few.get_mut(count) {
            *slot = name;
        }
    }
    false
}

/// Sorts members by name, in place, in O(n log n) whatever the input.
/// Names are unique, so the order is the one order.
pub(crate) fn sort_by_name<T>(members: &mut [(&str, T)]) {
    sort_by(members, |member| member.0);
}

/// Sorts `items` by `key`, in place, in O(n log n) whatever the input: a
/// heapsort, a few lines where the standard library's sorts are 4 KB of the
/// module. Not stable: items of equal keys may come in any order.
pub(crate) fn sort_by<T, K: Ord>(items: &mut [T], key: impl Fn(&T) -> K) {
    /// Moves the item at `root` down the heap of the first `end` items.
    fn sift<T, K: Ord>(items: &mut [T], key: &impl Fn(&T) -> K, mut root: usize, end: usize) {
        loop {
            let mut child = 2 * root + 1;
            let at = |at: usize| items.get(at).map(key);
            if child + 1 < end && at(child) < at(child + 1) {
                child += 1;
            }
            if child >= end || at(root) >= at(child) {
                return;
            }
            items.swap(root, child);
            root = child;
        }
    }
    let len = items.len();
    for root in (0..len / 2).rev() {
        sift(items, &key, root, len);
    }
    for end in (1..len).rev() {
        items.swap(0, end);
        sift(items, &key, 0, end);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    #[test]
    fn members_sort_by_name_at_every_length() {
        for len in 0..40 {
            // Names in a scrambled order: 7 and 40 have no common factor.
            let names: Vec<String> = (0..len).map(|i| format!("m{:02}", (i * 7) % 40)).collect();
            let mut members: Vec<(&str, usize)> = names.iter().map(|n| (n.as_str(), 0)).collect();
            sort_by_name(&mut members);
            let mut expected: Vec<&str> = names.iter().map(String::as_str).collect();
            expected.sort_unstable();
            assert_eq!(members.iter().map(|m| m.0).collect::<Vec<_>>(), expected);
        }
    }
}
