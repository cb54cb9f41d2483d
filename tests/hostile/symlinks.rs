//! Hostile input: symlinks. A link out of the repository root is refused, for writes and for the
//! plan layer's reads, naming the link; the directory it points to is never touched (`run_case`
//! compares it before and after). Links that stay inside the root are followed.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;

use super::filesystem::{PROD, prod, put};
use super::*;

/// Moves `rel` out of the repository and leaves a link to where it went.
fn move_out(dir: &Path, rel: &str) {
    let outside = outside_dir(dir);
    fs::create_dir_all(&outside).unwrap();
    let name = Path::new(rel).file_name().unwrap();
    let target = outside.join(name);
    fs::rename(dir.join(rel), &target).unwrap();
    symlink(&target, dir.join(rel)).unwrap();
}

fn refused(words: &'static [&'static str]) -> Expect {
    Expect::Fails { code: 1, words }
}

/// A layer resource linked to a file outside the repository.
fn resource_links_outside(dir: &Path) {
    prod(dir);
    let layer = dir.join("infrastructure/controllers");
    symlink("/etc/passwd", layer.join("leak.yaml")).unwrap();
    let k = layer.join("kustomization.yaml");
    let text = fs::read_to_string(&k).unwrap();
    fs::write(
        k,
        text.replace(
            "  - platform-namespace.yaml",
            "  - platform-namespace.yaml\n  - leak.yaml",
        ),
    )
    .unwrap();
}

/// The controllers layer file moved to `shared/` and linked back from inside the repository.
fn layer_links_inside(dir: &Path) {
    prod(dir);
    fs::create_dir(dir.join("shared")).unwrap();
    fs::rename(
        dir.join("cells/eu-west-2-prod/controllers.yaml"),
        dir.join("shared/controllers.yaml"),
    )
    .unwrap();
    symlink(
        "../../shared/controllers.yaml",
        dir.join("cells/eu-west-2-prod/controllers.yaml"),
    )
    .unwrap();
}

/// A Flux component path that is a linked directory.
fn component_is_a_linked_directory(dir: &Path) {
    prod(dir);
    symlink("/etc", dir.join("components-elsewhere")).unwrap();
    let layer = dir.join("cells/eu-west-2-prod/controllers.yaml");
    let text = fs::read_to_string(&layer).unwrap();
    fs::write(
        layer,
        text.replace("components: []", "components: [../../components-elsewhere]"),
    )
    .unwrap();
}

/// The cell's controllers layer file replaced by a link whose target is not UTF-8.
fn layer_links_to_a_name_not_utf8(dir: &Path) {
    use std::os::unix::ffi::OsStrExt;
    prod(dir);
    let layer = dir.join("cells/eu-west-2-prod/controllers.yaml");
    let target = std::ffi::OsStr::from_bytes(b"controllers-\xfe.yaml");
    fs::rename(&layer, layer.with_file_name(target)).unwrap();
    symlink(target, &layer).unwrap();
}

pub fn cases() -> Vec<Case> {
    vec![
        // A link's target is where a path enters cellgen: one that is not UTF-8 is refused,
        // naming the link (cellgen could not name where it leads).
        Case {
            name: "a layer file that links to a name that is not UTF-8",
            setup: layer_links_to_a_name_not_utf8,
            args: &["add-component", "karpenter"],
            expect: refused(&[
                "the target of the symbolic link `",
                "cells/eu-west-2-prod/controllers.yaml -> controllers-\u{FFFD}.yaml`",
                "is not valid UTF-8",
            ]),
        },
        Case {
            name: "cells/<cell> links out of the repository",
            setup: |dir| {
                prod(dir);
                move_out(dir, "cells/eu-west-2-prod");
            },
            args: &["add-component", "karpenter"],
            expect: refused(&[
                "cells/eu-west-2-prod is a symbolic link to",
                "outside the repository",
            ]),
        },
        Case {
            name: "terraform/cells/<cell> links out of the repository",
            setup: |dir| {
                prod(dir);
                move_out(dir, "terraform/cells/eu-west-2-prod");
            },
            args: &["add-component", "karpenter"],
            expect: refused(&[
                "terraform/cells/eu-west-2-prod is a symbolic link to",
                "outside the repository",
            ]),
        },
        Case {
            name: "new --force through a cell directory that links out",
            setup: |dir| {
                prod(dir);
                move_out(dir, "cells/eu-west-2-prod");
            },
            args: &["new", PROD, "--force"],
            expect: refused(&[
                "cells/eu-west-2-prod is a symbolic link to",
                "outside the repository",
            ]),
        },
        Case {
            name: "terraform/ (a parent) links out, and a new cell would be written through it",
            setup: |dir| {
                prod(dir);
                move_out(dir, "terraform");
            },
            args: &["new", "us-east-1-staging"],
            expect: refused(&["terraform is a symbolic link to", "outside the repository"]),
        },
        Case {
            name: "cells/ (a parent) links out",
            setup: |dir| {
                prod(dir);
                move_out(dir, "cells");
            },
            args: &["new", "us-east-1-staging"],
            expect: refused(&["cells is a symbolic link to", "nothing was written"]),
        },
        Case {
            name: "components/ links out, and a shared component would be written through it",
            setup: |dir| {
                prod(dir);
                fs::create_dir(dir.join("components")).unwrap();
                move_out(dir, "components");
            },
            args: &["add-component", "karpenter"],
            expect: refused(&["components is a symbolic link to", "outside the repository"]),
        },
        Case {
            name: "components/<name> links out (a component defined outside)",
            setup: |dir| {
                prod(dir);
                put(
                    dir,
                    "components/billing/component.yaml",
                    b"description: Billing\nlayers: [apps]\n",
                );
                put(
                    dir,
                    "components/billing/apps/kustomization.yaml",
                    b"apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n",
                );
                move_out(dir, "components/billing");
            },
            args: &["add-component", "billing"],
            expect: refused(&[
                "components/billing is a symbolic link to",
                "outside the repository",
            ]),
        },
        Case {
            name: "cellgen.yaml links to a file outside",
            setup: |dir| {
                prod(dir);
                move_out(dir, "cellgen.yaml");
            },
            args: &["list"],
            expect: refused(&[
                "cellgen.yaml is a symbolic link to",
                "outside the repository",
            ]),
        },
        Case {
            name: ".cellgen links out (records and the journal would go there)",
            setup: |dir| {
                prod(dir);
                move_out(dir, ".cellgen");
            },
            args: &["add-component", "kyverno"],
            expect: refused(&[".cellgen is a symbolic link to", "outside the repository"]),
        },
        Case {
            name: "a cell's record links to a file outside",
            setup: |dir| {
                prod(dir);
                move_out(dir, ".cellgen/cells/eu-west-2-prod.json");
            },
            args: &["new", PROD, "--force"],
            expect: refused(&[
                ".cellgen/cells/eu-west-2-prod.json is a symbolic link to",
                "outside",
            ]),
        },
        Case {
            name: "a layer file links to a file outside",
            setup: |dir| {
                prod(dir);
                move_out(dir, "cells/eu-west-2-prod/controllers.yaml");
            },
            args: &["add-component", "karpenter"],
            expect: refused(&[
                "cells/eu-west-2-prod/controllers.yaml is a symbolic link to",
                "outside",
            ]),
        },
        Case {
            name: "cell-metadata.tf links to a file outside",
            setup: |dir| {
                prod(dir);
                move_out(dir, "terraform/cells/eu-west-2-prod/cell-metadata.tf");
            },
            args: &["add-component", "karpenter"],
            expect: refused(&[
                "cell-metadata.tf is a symbolic link to",
                "outside the repository",
            ]),
        },
        Case {
            name: "a dangling link out where a component's .tf would be written",
            setup: |dir| {
                prod(dir);
                let outside = outside_dir(dir);
                fs::create_dir_all(&outside).unwrap();
                symlink(
                    outside.join("karpenter.tf"),
                    dir.join("terraform/cells/eu-west-2-prod/karpenter.tf"),
                )
                .unwrap();
            },
            args: &["add-component", "karpenter"],
            expect: refused(&[
                "karpenter.tf is a symbolic link to",
                "outside the repository",
            ]),
        },
        Case {
            name: "a relative link that climbs out with ..",
            setup: |dir| {
                prod(dir);
                let outside = outside_dir(dir);
                fs::create_dir_all(&outside).unwrap();
                fs::rename(dir.join("cells/eu-west-2-prod"), outside.join("cell")).unwrap();
                let up = format!(
                    "../../{}/cell",
                    outside.file_name().unwrap().to_string_lossy()
                );
                symlink(up, dir.join("cells/eu-west-2-prod")).unwrap();
            },
            args: &["remove-component", "karpenter"],
            expect: refused(&[
                "cells/eu-west-2-prod is a symbolic link to ../../",
                "outside",
            ]),
        },
        Case {
            name: "a journal whose paths lead through a link out of the repository",
            setup: |dir| {
                prod(dir);
                let outside = outside_dir(dir);
                fs::create_dir_all(&outside).unwrap();
                fs::write(outside.join("victim.txt"), "theirs\n").unwrap();
                fs::write(outside.join("victim.bak"), "replaced\n").unwrap();
                symlink(&outside, dir.join("cells/eu-west-2-prod/out")).unwrap();
                put(
                    dir,
                    ".cellgen/journal",
                    br#"{"cellgen":"0.1.0","pid":1,"command":"x","state":"applying","dirs":[],"ops":[{"path":"cells/eu-west-2-prod/out/victim.txt","backup":"cells/eu-west-2-prod/out/victim.bak"}]}"#,
                );
            },
            args: &["repair"],
            expect: refused(&[
                "cells/eu-west-2-prod/out/victim.txt",
                "leads through the symbolic link cells/eu-west-2-prod/out",
            ]),
        },
        Case {
            name: "a link loop",
            setup: |dir| {
                prod(dir);
                let file = dir.join("cells/eu-west-2-prod/controllers.yaml");
                fs::remove_file(&file).unwrap();
                symlink("controllers.yaml", &file).unwrap();
            },
            args: &["add-component", "karpenter"],
            expect: Expect::Fails {
                code: 1,
                words: &["controllers.yaml", "symbolic links on the way (a loop?)"],
            },
        },
        // Flux builds from source-controller's artifact, which has no symbolic links: a layer
        // file (or anything else Flux reads) that is a link, even inside the repository, is
        // refused for edits and builds alike.
        Case {
            name: "a layer file that links inside the repository is refused, as Flux would not see it",
            setup: layer_links_inside,
            args: &["add-component", "karpenter"],
            expect: refused(&[
                "cells/eu-west-2-prod/controllers.yaml is a symbolic link (to ../../shared/controllers.yaml)",
                "Flux's source-controller leaves symbolic links out",
                "nothing was written",
            ]),
        },
        Case {
            name: "check on a layer file that links inside the repository",
            setup: layer_links_inside,
            args: &["check"],
            expect: refused(&[
                "cells/eu-west-2-prod/kustomization.yaml:",
                "controllers.yaml",
                "goes through the symbolic link cells/eu-west-2-prod/controllers.yaml",
                "source-controller",
            ]),
        },
        Case {
            name: "render of a cell whose layer file links inside the repository",
            setup: layer_links_inside,
            args: &["render", PROD],
            expect: refused(&[
                "cells/eu-west-2-prod/controllers.yaml",
                "symbolic link",
                "Flux would not find it",
            ]),
        },
        Case {
            name: "check on a Flux component path linked inside the repository",
            setup: |dir| {
                prod(dir);
                fs::create_dir_all(dir.join("shared/comp")).unwrap();
                fs::write(
                    dir.join("shared/comp/kustomization.yaml"),
                    "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n",
                )
                .unwrap();
                fs::create_dir_all(dir.join("components")).unwrap();
                symlink("../shared/comp", dir.join("components/linked")).unwrap();
                let layer = dir.join("cells/eu-west-2-prod/controllers.yaml");
                let text = fs::read_to_string(&layer).unwrap();
                fs::write(
                    layer,
                    text.replace("components: []", "components: [../../components/linked]"),
                )
                .unwrap();
            },
            args: &["check"],
            expect: refused(&[
                "error[bad-component]",
                "--> cells/eu-west-2-prod/controllers.yaml:",
                "goes through the symbolic link components/linked",
            ]),
        },
        // Builds read through no link at all: Flux's artifact has none.
        Case {
            name: "a layer resource linked to a file outside the repository",
            setup: resource_links_outside,
            args: &["render", PROD, "--layer", "controllers"],
            expect: refused(&[
                "infrastructure/controllers/leak.yaml",
                "symbolic link",
                "Flux",
            ]),
        },
        Case {
            name: "a Flux component path that is a linked directory",
            setup: component_is_a_linked_directory,
            args: &["render", PROD, "--layer", "controllers"],
            expect: refused(&["components-elsewhere", "symbolic link"]),
        },
        // Terraform reads through links: there, a link that stays inside is followed and kept.
        Case {
            name: "a Terraform file that links inside the repository is followed and kept",
            setup: |dir| {
                prod(dir);
                fs::create_dir(dir.join("shared")).unwrap();
                let tf = "terraform/cells/eu-west-2-prod/cell-metadata.tf";
                fs::rename(dir.join(tf), dir.join("shared/cell-metadata.tf")).unwrap();
                symlink("../../../shared/cell-metadata.tf", dir.join(tf)).unwrap();
            },
            args: &["add-component", "karpenter"],
            expect: Expect::Succeeds(|dir, _| {
                let link = dir.join("terraform/cells/eu-west-2-prod/cell-metadata.tf");
                assert!(
                    fs::symlink_metadata(&link)
                        .unwrap()
                        .file_type()
                        .is_symlink()
                );
                assert!(read(&dir.join("shared/cell-metadata.tf")).contains("karpenter"));
            }),
        },
    ]
}

#[test]
fn symlinks_table() {
    run_table("symlinks", &cases());
}
