//! The floor `cellgen check` is measured against (bench/check-1000.sh): open and read every
//! file of a list (one path a line, the files check opens), as check reads them, and print the
//! bytes read. Nothing else: no parsing.

use std::io::Read;

fn main() {
    let list = std::env::args()
        .nth(1)
        .expect("usage: read_inputs FILE_LIST");
    let list = std::fs::read_to_string(list).expect("the file list");
    let mut total = 0usize;
    let mut buf = Vec::new();
    for path in list.lines().filter(|l| !l.is_empty()) {
        buf.clear();
        match std::fs::File::open(path).and_then(|mut f| f.read_to_end(&mut buf)) {
            Ok(n) => total += n,
            Err(e) => eprintln!("{path}: {e}"),
        }
    }
    println!("{total}");
}
