//! Edits of YAML files users own: a Flux Kustomization's `spec.components` and cellgen.yaml's
//! `schema` and `keys`. yaml-edit (lossless) parses and locates; changes are spliced into the text.

use std::str::FromStr;

use yaml_edit::{Document, Mapping, YamlNode};

use super::text::{indent_at, line_end, line_number, line_start, splice};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}{}", line.map(|l| format!(" (line {l})")).unwrap_or_default())]
pub struct YamlEditError {
    pub line: Option<usize>,
    pub message: String,
}

fn fail(message: impl Into<String>) -> YamlEditError {
    YamlEditError {
        line: None,
        message: message.into(),
    }
}

fn parse(text: &str) -> Result<Document, YamlEditError> {
    // yaml-edit recovers from errors; a strict parse first gives the user a line number.
    if let Err(e) = yaml_serde::from_str::<yaml_serde::Value>(text) {
        return Err(YamlEditError {
            line: e.location().map(|l| l.line()),
            message: format!("not valid YAML: {e}"),
        });
    }
    Document::from_str(text).map_err(|e| fail(format!("not valid YAML: {e}")))
}

fn root_mapping(doc: &Document) -> Result<Mapping, YamlEditError> {
    doc.as_mapping()
        .ok_or_else(|| fail("the document is not a mapping"))
}

fn range(node: &YamlNode) -> std::ops::Range<usize> {
    let r = node.byte_range();
    r.start as usize..r.end as usize
}

fn scalar_text(node: &YamlNode) -> Option<String> {
    node.as_scalar().map(|s| s.as_string())
}

/// The sequence at `spec.components`: its items (text and byte range) and layout.
struct ComponentsList {
    key_offset: usize,
    value: Option<std::ops::Range<usize>>,
    flow: bool,
    items: Vec<(String, std::ops::Range<usize>)>,
}

fn components_list(text: &str, doc: &Document) -> Result<Option<ComponentsList>, YamlEditError> {
    let spec = root_mapping(doc)?
        .get_mapping("spec")
        .ok_or_else(|| fail("no `spec` mapping: is this a Flux Kustomization?"))?;
    let Some(entry) = spec.find_entry_by_key("components") else {
        return Ok(None);
    };
    let key_offset = entry
        .key_node()
        .map_or(entry.byte_range().start as usize, |k| range(&k).start);
    let Some(value) = entry.value_node() else {
        return Ok(Some(ComponentsList {
            key_offset,
            value: None,
            flow: false,
            items: Vec::new(),
        }));
    };
    let Some(seq) = value.as_sequence() else {
        if value.as_scalar().is_some_and(|s| s.is_null()) {
            return Ok(Some(ComponentsList {
                key_offset,
                value: None,
                flow: false,
                items: Vec::new(),
            }));
        }
        return Err(YamlEditError {
            line: Some(line_number(text, key_offset)),
            message: "`spec.components` is not a list".into(),
        });
    };
    let items = seq
        .values()
        .map(|item| scalar_text(&item).map(|s| (s, range(&item))))
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| YamlEditError {
            line: Some(line_number(text, key_offset)),
            message: "`spec.components` must be a list of paths".into(),
        })?;
    Ok(Some(ComponentsList {
        key_offset,
        value: Some(range(&value)),
        flow: seq.is_flow_style(),
        items,
    }))
}

/// Paths listed in a Flux Kustomization's `spec.components`.
pub fn flux_components(text: &str) -> Result<Vec<String>, YamlEditError> {
    let doc = parse(text)?;
    Ok(components_list(text, &doc)?
        .map(|l| l.items.into_iter().map(|(s, _)| s).collect())
        .unwrap_or_default())
}

/// Appends `path` to `spec.components`; `components: []` becomes a block list.
pub fn add_flux_component(text: &str, path: &str) -> Result<String, YamlEditError> {
    let doc = parse(text)?;
    let list = components_list(text, &doc)?;
    let Some(list) = list else {
        return Err(fail(
            "no `spec.components` list; add `components: []` under spec",
        ));
    };
    if list
        .items
        .iter()
        .any(|(p, _)| p.trim_end_matches('/') == path)
    {
        return Ok(text.to_string());
    }
    let key_indent = indent_at(text, list.key_offset);
    match (&list.value, list.flow, list.items.last()) {
        (_, true, Some((_, last))) => Ok(splice(text, last.end..last.end, &format!(", {path}"))),
        (_, false, Some((_, last))) => {
            let item_line = line_start(text, last.start);
            let dash_indent = indent_at(text, item_line);
            let at = line_end(text, last.end);
            let mut line = format!("{}- {path}\n", " ".repeat(dash_indent));
            if at == text.len() && !text.ends_with('\n') {
                line.insert(0, '\n');
                line.pop();
            }
            Ok(splice(text, at..at, &line))
        }
        (value, _, None) => {
            // `components: []` or `components:`: drop the `[]` (keeping any comment on the key's
            // line) and start a block list under the key.
            let mut text = text.to_string();
            if let Some(value) = value {
                let start = text[..value.start].trim_end_matches(' ').len();
                text = splice(&text, start..value.end, "");
            }
            let at = line_end(&text, list.key_offset);
            let newline = if text[..at].ends_with('\n') { "" } else { "\n" };
            Ok(splice(
                &text,
                at..at,
                &format!("{newline}{}  - {path}\n", " ".repeat(key_indent)),
            ))
        }
    }
}

/// Removes `path` from `spec.components`; removing the last item leaves `components: []`.
pub fn remove_flux_component(text: &str, path: &str) -> Result<String, YamlEditError> {
    let doc = parse(text)?;
    let Some(list) = components_list(text, &doc)? else {
        return Ok(text.to_string());
    };
    let Some(index) = list
        .items
        .iter()
        .position(|(p, _)| p.trim_end_matches('/') == path)
    else {
        return Ok(text.to_string());
    };
    let (_, item) = &list.items[index];
    if list.flow {
        if list.items.len() == 1
            && let Some(value) = &list.value
        {
            // The list is empty now: `[]`, whatever spacing the last item had.
            return Ok(splice(text, value.clone(), "[]"));
        }
        let range = if index + 1 < list.items.len() {
            item.start..list.items[index + 1].1.start
        } else {
            list.items[index - 1].1.end..item.end
        };
        return Ok(splice(text, range, ""));
    }
    let without = splice(
        text,
        line_start(text, item.start)..line_end(text, item.end),
        "",
    );
    if list.items.len() == 1 {
        // The list is empty now: back to `components: []`, the form cellgen generates.
        let key_end = text[list.key_offset..]
            .find(':')
            .map_or(list.key_offset, |i| list.key_offset + i + 1);
        return Ok(splice(&without, key_end..key_end, " []"));
    }
    Ok(without)
}

/// Replaces the top-level `schema: N` of cellgen.yaml.
pub fn set_schema(text: &str, schema: u32) -> Result<String, YamlEditError> {
    let doc = parse(text)?;
    let value = root_mapping(&doc)?
        .get("schema")
        .ok_or_else(|| fail("no top-level `schema`"))?;
    Ok(splice(text, range(&value), &schema.to_string()))
}

/// Appends entries to the top-level `keys` mapping of cellgen.yaml. Field values are YAML scalars
/// as they should appear (see [`scalar`] for strings).
pub fn append_keys(
    text: &str,
    entries: &[(String, Vec<(&str, String)>)],
) -> Result<String, YamlEditError> {
    let doc = parse(text)?;
    let keys = root_mapping(&doc)?
        .get_mapping("keys")
        .ok_or_else(|| fail("no top-level `keys` mapping"))?;
    let last = keys
        .entries()
        .last()
        .ok_or_else(|| fail("`keys` is empty"))?;
    let first = keys
        .entries()
        .next()
        .and_then(|e| e.key_node())
        .ok_or_else(|| fail("`keys` is empty"))?;
    let indent = indent_at(text, range(&first).start);
    let field_indent = keys
        .entries()
        .next()
        .and_then(|e| e.value_node())
        .and_then(|v| {
            v.as_mapping()
                .and_then(|m| m.entries().next())
                .and_then(|e| e.key_node())
        })
        .map_or(indent + 2, |k| indent_at(text, range(&k).start));
    let mut block = String::new();
    for (key, fields) in entries {
        block.push_str(&format!("{}{key}:\n", " ".repeat(indent)));
        for (field, value) in fields {
            block.push_str(&format!("{}{field}: {value}\n", " ".repeat(field_indent)));
        }
    }
    let r = last.byte_range();
    let at = content_end(text, r.start as usize, r.end as usize);
    let mut text = text.to_string();
    if !text[..at].ends_with('\n') {
        text.insert(at, '\n');
        return Ok(splice(&text, at + 1..at + 1, &block));
    }
    Ok(splice(&text, at..at, &block))
}

/// Removes top-level `keys.<key>` entries (with their nested fields) from cellgen.yaml.
pub fn remove_keys(text: &str, remove: &[String]) -> Result<String, YamlEditError> {
    let doc = parse(text)?;
    let keys = root_mapping(&doc)?
        .get_mapping("keys")
        .ok_or_else(|| fail("no top-level `keys` mapping"))?;
    let mut ranges: Vec<std::ops::Range<usize>> = keys
        .entries()
        .filter(|e| {
            e.key_node()
                .and_then(|k| scalar_text(&k))
                .is_some_and(|k| remove.contains(&k))
        })
        .map(|e| {
            let r = e.byte_range();
            line_start(text, r.start as usize)..content_end(text, r.start as usize, r.end as usize)
        })
        .collect();
    ranges.sort_by_key(|r| std::cmp::Reverse(r.start));
    Ok(ranges
        .into_iter()
        .fold(text.to_string(), |acc, r| splice(&acc, r, "")))
}

/// End of the last line of `start..end` that is neither blank nor a comment: a node's range can
/// run over comments that belong to what follows it.
fn content_end(text: &str, start: usize, end: usize) -> usize {
    let mut end = line_end(text, end.saturating_sub(1).max(start));
    while end > start {
        let line_begin = line_start(text, end - 1);
        let line = text[line_begin..end].trim();
        if line_begin <= start || !(line.is_empty() || line.starts_with('#')) {
            break;
        }
        end = line_begin;
    }
    end
}

/// A string as a YAML scalar: plain when that reads back as the same string, else single-quoted.
pub fn scalar(value: &str) -> String {
    let plain_ok = !value.is_empty()
        && !value.contains(['\n', '\''])
        && yaml_serde::from_str::<yaml_serde::Value>(&format!("k: {value}"))
            .ok()
            .and_then(|v| v.get("k").and_then(|v| v.as_str().map(|s| s == value)))
            .unwrap_or(false);
    if plain_ok {
        value.to_string()
    } else {
        format!("'{}'", value.replace('\'', "''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LAYER: &str = "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: controllers\nspec:\n  path: ./infrastructure/controllers\n  components: [] # optional add-ons\n  prune: true\n";

    #[test]
    fn add_and_remove_components_round_trip() {
        let one = add_flux_component(LAYER, "../../components/a/controllers").unwrap();
        assert!(
            one.contains(
                "  components: # optional add-ons\n    - ../../components/a/controllers\n  prune"
            ),
            "{one}"
        );
        let two = add_flux_component(&one, "../../components/b/controllers").unwrap();
        assert_eq!(
            flux_components(&two).unwrap(),
            [
                "../../components/a/controllers",
                "../../components/b/controllers"
            ]
        );
        assert_eq!(
            add_flux_component(&two, "../../components/b/controllers").unwrap(),
            two
        );
        let back = remove_flux_component(&two, "../../components/b/controllers").unwrap();
        assert_eq!(back, one);
        assert_eq!(
            remove_flux_component(&back, "../../components/a/controllers").unwrap(),
            LAYER
        );
    }

    #[test]
    fn flow_lists_stay_flow() {
        let text = LAYER.replace("[]", "[../x]");
        let added = add_flux_component(&text, "../y").unwrap();
        assert!(added.contains("components: [../x, ../y]"), "{added}");
        assert_eq!(remove_flux_component(&added, "../y").unwrap(), text);
        let spaced = LAYER.replace("[]", "[ ../x ]");
        assert_eq!(remove_flux_component(&spaced, "../x").unwrap(), LAYER);
    }

    #[test]
    fn schema_and_keys() {
        let text = "# c\nschema: 1 # bump me\nkeys:\n  a:\n    description: A\n    example: x\n# trailing\n";
        let text2 = set_schema(text, 2).unwrap();
        assert!(text2.contains("schema: 2 # bump me"));
        let fields = vec![
            ("description", scalar("B: colon")),
            ("example", scalar("y")),
        ];
        let added = append_keys(&text2, &[("b".to_string(), fields)]).unwrap();
        assert!(
            added.contains(
                "    example: x\n  b:\n    description: 'B: colon'\n    example: y\n# trailing"
            ),
            "{added}"
        );
        assert_eq!(remove_keys(&added, &["b".into()]).unwrap(), text2);
    }
}
