//! Where a diagnostic or change points: an RFC 6901 JSON Pointer, held as a
//! chain of borrowed segments on the stack and written out only when a
//! diagnostic or change is made.

use crate::keys::KeyOptions;
use crate::schema::{self, Key, Place};
use crate::text;

/// How many bytes of a member name a pointer keeps: a hostile, huge or
/// control-laden key must not turn a diagnostic into a log-forging vector.
pub const MAX_SEGMENT_BYTES: usize = 128;

/// A place in a message, from the root.
#[derive(Clone, Copy)]
pub struct Path<'a> {
    parent: Option<&'a Path<'a>>,
    segment: Segment<'a>,
}

#[derive(Clone, Copy)]
enum Segment<'a> {
    /// The message itself, or any value a pointer starts from.
    Root,
    /// A place of the table, its keys taken from `keys`.
    Place(Place, &'a KeyOptions),
    Name(&'a str),
    Index(usize),
}

impl<'a> Path<'a> {
    /// The empty pointer.
    pub const ROOT: Path<'static> = Path {
        parent: None,
        segment: Segment::Root,
    };

    /// The pointer of a place of the table, under the keys in force.
    pub fn place(place: Place, keys: &'a KeyOptions) -> Self {
        Path {
            parent: None,
            segment: Segment::Place(place, keys),
        }
    }

    /// This pointer followed by the member `name`.
    pub fn join(&'a self, name: &'a str) -> Path<'a> {
        Path {
            parent: Some(self),
            segment: Segment::Name(name),
        }
    }

    /// This pointer followed by the array index `index`.
    pub(crate) fn index(&'a self, index: usize) -> Path<'a> {
        Path {
            parent: Some(self),
            segment: Segment::Index(index),
        }
    }

    /// The pointer as text: names escaped (`~` as `~0`, `/` as `~1`), with
    /// AI-13 characters neutralized and long names cut.
    pub fn render(&self) -> String {
        let mut chain = vec![self.segment];
        let mut at = self.parent;
        while let Some(path) = at {
            chain.push(path.segment);
            at = path.parent;
        }
        let mut out = String::with_capacity(64);
        for segment in chain.iter().rev() {
            match *segment {
                Segment::Root => {}
                Segment::Place(place, keys) => {
                    for key in schema::keys_to(place) {
                        // The others of an object stand where the object does.
                        if *key != Key::Others {
                            push_name(&mut out, key_name(*key, keys));
                        }
                    }
                }
                Segment::Name(name) => push_name(&mut out, name),
                Segment::Index(index) => {
                    out.push('/');
                    out.push_str(&index.to_string());
                }
            }
        }
        out
    }
}

/// The member name a key of the table stands for, under the keys in force.
pub fn key_name(key: Key, keys: &KeyOptions) -> &str {
    match key {
        Key::Root | Key::Others => "",
        Key::Name(name) => name,
        Key::Field(field) => field.name(),
        Key::Invocation => keys.invocation_key(),
        Key::Ui => keys.ui_key(),
    }
}

fn push_name(out: &mut String, name: &str) {
    out.push('/');
    let name = text::clean(name, MAX_SEGMENT_BYTES).text;
    // Runs between the two characters a pointer escapes go on whole.
    let mut runs = name.split(['~', '/']);
    let mut at = 0;
    if let Some(first) = runs.next() {
        out.push_str(first);
        at = first.len();
    }
    for run in runs {
        out.push_str(if name.as_bytes().get(at) == Some(&b'~') {
            "~0"
        } else {
            "~1"
        });
        out.push_str(run);
        at += 1 + run.len();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    #[test]
    fn escapes_and_neutralizes() {
        let keys = KeyOptions::default();
        let envelope = Path::place(Place::Envelope, &keys);
        assert_eq!(
            envelope.join("a/b~c").render(),
            "/params/_meta/io.modelcontextprotocol~1aiInvocation/a~1b~0c"
        );
        assert_eq!(Path::ROOT.join("x\ny").index(3).render(), "/x y/3");
        assert_eq!(Path::ROOT.render(), "");
        assert_eq!(
            Path::place(Place::BareTurnId, &keys).render(),
            "/params/_meta/turnId"
        );
    }
}
