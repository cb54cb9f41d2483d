use super::*;
use crate::model::parsed_hcl::parse_checked;

/// The line-by-line reading `may_call_module` replaces.
fn by_lines(text: &str) -> bool {
    text.contains("/*")
        || text.lines().any(|line| {
            line.trim_start()
                .strip_prefix("module")
                .is_some_and(|rest| {
                    !rest.starts_with(|c: char| c.is_alphanumeric() || "_-.".contains(c))
                })
        })
}

#[test]
fn shared_parses_are_parses_and_errors_are_edit_hcls() {
    let dir = tempfile::tempdir().unwrap();
    let files = FileStore::new(Utf8Path::from_path(dir.path()).unwrap());
    let text = "a = 1\nb = { c = 2 }\n";
    for _ in 0..3 {
        let body = parse_checked(files.memos(), text).unwrap();
        assert_eq!(
            body.to_string(),
            crate::ports::edit::hcl::parse_body(text)
                .unwrap()
                .to_string()
        );
        // Another thread's view goes through the shared cache.
        std::thread::scope(|s| {
            s.spawn(|| {
                let again = parse_checked(files.memos(), text).unwrap();
                assert!(Arc::ptr_eq(&again, &body), "parsed once per command");
            });
        });
    }
    let bad = "a = \n}\n";
    for _ in 0..2 {
        assert_eq!(
            parse_checked(files.memos(), bad).err(),
            crate::ports::edit::hcl::parse_body(bad).err()
        );
    }
}

/// Whether the parsed `decls` declare `name` as a `word`.
fn declared(decls: &super::super::decls::Decls, word: &str, name: &str) -> bool {
    use super::super::sensitive::Kind;
    let block = |kind: Kind| {
        decls
            .blocks
            .get(name)
            .is_some_and(|b| b.iter().any(|(k, _, _)| *k == kind))
    };
    match word {
        "variable" => decls.vars.contains_key(name),
        "locals" => decls.locals.contains_key(name),
        "resource" => block(Kind::Resource),
        "data" => block(Kind::Data),
        "module" => decls.modules.contains_key(name),
        "output" => decls.outputs.contains_key(name),
        _ => false,
    }
}

#[test]
fn may_declare_keeps_every_declaration_and_skips_mere_mentions() {
    let texts = [
        "variable \"a\" {}\n",
        "locals { b = 1 }\n",
        "locals {\n  b = 1\n\tc = 2\n}\n",
        "resource \"aws_x\" \"c\" {}\ndata \"aws_y\" \"d\" {}\n",
        "resource aws_x c {}\ndata\taws_y d {}\n",
        "module \"e\" {}\noutput \"f\" {}\n",
        "  module \"e\" {\n  source = \"./e\"\n}\n",
        "variable \"\\u0061\" {}\n",
        "resource \"aws_x\" \"\\u0063\" {}\n",
        "module /* why */ \"e\" {}\n",
        "locals /* c */ { b = 1 }\n",
        "locals {\n  b=1\n\u{a0}c\t= 2\r\n  d-é = 3\n}\n",
        "e = 1\nlocals {\n  f = 2\n}\nlocals {\n  g = 3\n}\n",
        "# nothing declared here\n",
        "x = module.e.out\ny = var.a\n",
        "",
    ];
    let words = DECLARING.iter().copied().chain(["terraform"]);
    for text in texts {
        let file = Content::new(text.to_string(), Arc::default());
        let decls = super::super::decls::Decls::of(file.body());
        for word in words.clone() {
            for name in ["a", "b", "c", "d", "e", "f", "g", "aws_x", "d-é", "é"] {
                if declared(&decls, word, name) {
                    assert!(file.may_declare(word, name), "{text:?} {word} {name}");
                }
            }
        }
        // The index of line words answers as searching the text for the name does.
        for name in ["a", "b", "c", "d", "e", "f", "g", "aws_x", "d-é", "é"] {
            assert_eq!(
                file.local_on_its_line(name),
                local_by_search(text, name),
                "{text:?} {name}"
            );
        }
        let any = DECLARING.iter().any(|w| text.contains(w));
        assert_eq!(file.words != 0, any, "{text:?}");
    }
    // What made every cell parse its flux.tf: a backslash in a heredoc, names in
    // references and strings. None of these lines declares anything.
    let mentions = Content::new(
        "resource \"terraform_data\" \"guard\" {\n  x = module.vpc.id\n  y = \"variable e\"\n  z = <<-EOT\n    sed 's/\\\\n//'\n  EOT\n}\n"
            .to_string(),
        Arc::default(),
    );
    for (word, name) in [("module", "vpc"), ("variable", "e"), ("locals", "x")] {
        assert!(!mentions.may_declare(word, name), "{word} {name}");
    }
    assert!(mentions.may_declare("resource", "guard"));
    // Before the first `locals` header, no line declares a local.
    let before = Content::new("e = 1\nlocals {\n  f = 2\n}\n".into(), Arc::default());
    assert!(!before.may_declare("locals", "e"));
    assert!(before.may_declare("locals", "f"));
    // A local's name is the first word of its line, not a mere prefix of it.
    let text = "locals {\n  bb = 1\n  cc = b\n  dé = 2\n}\n";
    let longer = Content::new(text.into(), Arc::default());
    assert!(longer.may_declare("locals", "bb"));
    for name in ["b", "c", "d"] {
        assert!(!longer.may_declare("locals", name), "{name}");
        assert!(!local_by_search(text, name), "{name}");
    }
}

/// The search of the text [`Content::local_on_its_line`]'s index replaces: `name` where a line
/// starts after the first `locals` header, not followed by a character of a longer word.
fn local_by_search(text: &str, name: &str) -> bool {
    let Some(after) = header_rests(text, "locals").first().map(|r| r.end) else {
        return false;
    };
    memchr::memmem::find_iter(&text.as_bytes()[after..], name.as_bytes()).any(|at| {
        let at = after + at;
        starts_line(text, at)
            && !text
                .as_bytes()
                .get(at + name.len())
                .is_some_and(|b| in_line_word(*b))
    })
}

#[test]
fn module_calls_are_found_as_line_by_line() {
    for text in [
        "module \"vpc\" {\n}\n",
        "  module \"a\" {}\n",
        "\u{a0}\tmodule{\n",
        "x = 1\nmodule\r\n",
        "source = \"terraform-aws-modules/eks/aws\"\n",
        "# a module here\nmodules = 1\n",
        "module_x = 1\nmodule.a = 2\n",
        "abc\rmodule \"a\" {}\n",
        "/* module */",
        "",
        "module",
    ] {
        let file = Content::new(text.to_string(), Arc::default());
        assert_eq!(file.may_call_module(), by_lines(text), "{text:?}");
    }
}
