//! Expected outputs ported from fluxcd/pkg's own tests:
//! `envsubst/eval_test.go` (TestExpand, TestExpandStrict) and `envsubst/funcs_test.go`
//! (Test_substr), at the commits read for this port.

use std::collections::HashMap;

use cellgen::ports::envsubst::{SubstError, envsubst};

fn eval(params: &[(&str, &str)], input: &str, strict: bool) -> Result<String, SubstError> {
    let m: HashMap<String, String> = params
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    envsubst(input, &|k| m.get(k).cloned(), strict)
}

/// (params, input, expected output)
type Case = (
    &'static [(&'static str, &'static str)],
    &'static str,
    &'static str,
);

/// envsubst/eval_test.go TestExpand (non-strict: the mapping always reports "exists").
#[test]
fn test_expand() {
    let cases: &[Case] = &[
        (&[], "abcdEFGH28ij", "abcdEFGH28ij"),
        (&[("var01", "abcdEFGH28ij")], "${#var01}", "12"),
        (&[("var01", "abcdEFGH28ij")], "${var01^}", "AbcdEFGH28ij"),
        (&[("var01", "abcdEFGH28ij")], "${var01^^}", "ABCDEFGH28IJ"),
        (&[("var01", "ABCDEFGH28IJ")], "${var01,}", "aBCDEFGH28IJ"),
        (&[("var01", "ABCDEFGH28IJ")], "${var01,,}", "abcdefgh28ij"),
        (
            &[("path_name", "/home/bozo/ideas/thoughts.for.today")],
            "${path_name:11}",
            "ideas/thoughts.for.today",
        ),
        (
            &[("path_name", "/home/bozo/ideas/thoughts.for.today")],
            "${path_name:11:5}",
            "ideas",
        ),
        (&[("var", "abc")], "${var=xyz}", "abc"),
        (&[], "${var=xyz}", "xyz"),
        (
            &[("default_var", "foo")],
            "something ${var=${default_var}}",
            "something foo",
        ),
        (
            &[("default_var", "foo1")],
            "foo: ${var=${default_var}-suffix}",
            "foo: foo1-suffix",
        ),
        (
            &[("default_var", "foo1")],
            "foo: ${var=prefix${default_var}-suffix}",
            "foo: prefixfoo1-suffix",
        ),
        (&[], "${var:=xyz}", "xyz"),
        (
            &[("stringZ", "abcABC123ABCabc")],
            "${stringZ/%abc/XYZ}",
            "abcABC123ABCXYZ",
        ),
        (
            &[("stringZ", "abcABC123ABCabc")],
            "${stringZ/#abc/XYZ}",
            "XYZABC123ABCabc",
        ),
        (
            &[("stringZ", "somevalue")],
            "${stringZ/#/prefix-}",
            "prefix-somevalue",
        ),
        (
            &[("stringZ", "somevalue")],
            "${stringZ/%/-suffix}",
            "somevalue-suffix",
        ),
        (
            &[("stringZ", "abcABC123ABCabc")],
            "${stringZ//abc/xyz}",
            "xyzABC123ABCxyz",
        ),
        (
            &[("stringZ", "abcABC123ABCabc")],
            "${stringZ/abc/xyz}",
            "xyzABC123ABCabc",
        ),
        (
            &[("filename", "bash.string.txt")],
            "${filename#*.}",
            "string.txt",
        ),
        (&[("filename", "path/to/file")], "${filename#*/}", "to/file"),
        (
            &[("filename", "/path/to/file")],
            "${filename#*/}",
            "path/to/file",
        ),
        (&[("filename", "bash.string.txt")], "${filename##*.}", "txt"),
        (&[("filename", "path/to/file")], "${filename##*/}", "file"),
        (&[("filename", "/path/to/file")], "${filename##*/}", "file"),
        (
            &[("filename", "bash.string.txt")],
            "${filename%.*}",
            "bash.string",
        ),
        (
            &[("filename", "bash.string.txt")],
            "${filename%%.*}",
            "bash",
        ),
        (
            &[("var01", "abcdEFGH28ij")],
            "${var=${var01^^}}",
            "ABCDEFGH28IJ",
        ),
        (&[("var01", "abcdEFGH28ij")], "$${var01}", "${var01}"),
        (
            &[("var01", "abcdEFGH28ij")],
            "some text ${var01}$${var$${var01}$var01${var01}",
            "some text abcdEFGH28ij${var${var01}$var01abcdEFGH28ij",
        ),
        (
            &[("default_var", "foo")],
            "something $${var=${default_var}}",
            "something ${var=foo}",
        ),
        (&[("stringZ", "foo/bar")], r"${stringZ/\//-}", "foo-bar"),
        (
            &[("stringZ", "foo/bar/baz")],
            r"${stringZ//\//-}",
            "foo-bar-baz",
        ),
        (
            &[("default_var", "foo")],
            "\\\\something ${var=${default_var}}",
            "\\\\something foo",
        ),
        (&[("stringZ", "foo.bar")], "${stringZ/./}", "foobar"),
    ];
    for (params, input, want) in cases {
        assert_eq!(
            eval(params, input, false).as_deref(),
            Ok(*want),
            "input {input}"
        );
    }
}

/// envsubst/eval_test.go TestExpandStrict.
#[test]
fn test_expand_strict() {
    assert_eq!(
        eval(&[], "abcdEFGH28ij", true).as_deref(),
        Ok("abcdEFGH28ij")
    );
    assert_eq!(
        eval(&[("foo", "bar")], "${foo}", true).as_deref(),
        Ok("bar")
    );
    assert_eq!(eval(&[("foo", "")], "${foo}", true).as_deref(), Ok(""));
    assert!(matches!(
        eval(&[], "${missing}", true),
        Err(SubstError::VariableNotSet { .. })
    ));
    assert_eq!(
        eval(&[("foo", "bar")], "${missing:=default}", true).as_deref(),
        Ok("default")
    );
    for input in [
        "${#missing}",
        "${missing^}",
        "${missing^^}",
        "${missing,}",
        "${missing,,}",
        "${missing:0}",
        "${missing:0:10}",
        "${missing/pattern/replacement}",
        "${missing//pattern/replacement}",
        "${missing/#pattern/replacement}",
        "${missing/%pattern/replacement}",
        "${missing#pattern}",
        "${missing##pattern}",
        "${missing%pattern}",
        "${missing%%pattern}",
    ] {
        assert!(
            matches!(
                eval(&[], input, true),
                Err(SubstError::VariableNotSet { .. })
            ),
            "{input}"
        );
    }
    assert_eq!(
        eval(&[], "${missing:-fallback}", true).as_deref(),
        Ok("fallback")
    );
    assert_eq!(
        eval(&[], "${missing:=assigned}", true).as_deref(),
        Ok("assigned")
    );
    assert_eq!(
        eval(&[], "${missing=assigned}", true).as_deref(),
        Ok("assigned")
    );
}

/// envsubst/funcs_test.go Test_substr, through the `${v:pos:len}` syntax. The negative-length
/// cases that fluxcd/pkg#1275 made bash-like are errors here (older controllers panic).
#[test]
fn test_substr() {
    let s = &[("s", "123456789123456789"), ("t", "12345678")];
    for (input, want) in [
        ("${s:0:8}", "12345678"),
        ("${s:1:8}", "23456789"),
        ("${s:9}", "123456789"),
        ("${s:9:50}", "123456789"),
        ("${s:${n:=-3}:2}", "78"),
        ("${s:${n:=-300}:3}", "123"),
        ("${t:9:1}", ""),
    ] {
        assert_eq!(eval(s, input, false).as_deref(), Ok(want), "{input}");
    }
    assert!(matches!(
        eval(&[("h", "hello world")], "${h:2:-1}", false),
        Err(SubstError::SubstringOutOfRange { .. })
    ));
}
