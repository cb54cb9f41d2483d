//! A command's memory of what it read: one value per type (a parse cache of the layer above,
//! which this layer knows nothing of), made on first use and dropped with the `Memos`. The
//! command's `FileStore` holds one ([`crate::root::filestore::FileStore::memos`]), so what a
//! command remembers lives exactly as long as the command's view of the files: no process-wide
//! cache, nothing carried from one command (or test) to the next.

use std::any::Any;
use std::sync::{Arc, Mutex};

#[derive(Default)]
pub struct Memos {
    values: Mutex<Vec<Arc<dyn Any + Send + Sync>>>,
}

impl std::fmt::Debug for Memos {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Memos")
    }
}

impl Memos {
    /// The one `T` of these memos, made when first asked for.
    pub fn get<T: Any + Default + Send + Sync>(&self) -> Arc<T> {
        // Whole values are pushed, never half-made ones: a poisoned lock's list is whole.
        let mut values = self.values.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(found) = values.iter().find_map(|v| v.clone().downcast::<T>().ok()) {
            return found;
        }
        let made = Arc::new(T::default());
        values.push(made.clone());
        made
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_value_per_type_per_memos() {
        let memos = Memos::default();
        let a = memos.get::<Mutex<Vec<u8>>>();
        a.lock().unwrap().push(1);
        assert_eq!(*memos.get::<Mutex<Vec<u8>>>().lock().unwrap(), [1]);
        assert_eq!(*memos.get::<Mutex<String>>().lock().unwrap(), "");
        // Another command's memos start empty.
        assert!(
            Memos::default()
                .get::<Mutex<Vec<u8>>>()
                .lock()
                .unwrap()
                .is_empty()
        );
    }
}
