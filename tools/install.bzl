"""Install rules: what `bazel run //:install -- --prefix DIR` copies where.

Three pieces, used from the root BUILD:

  rondo_shared_library(name, deps, soversion)
      A cc_binary `lib<name>.so` (linkshared) over `deps`, with the SONAME
      `lib<name>.so.<soversion>`. The workspace's libraries among deps are
      linked whole (as alwayslink), else a shared library with no sources of
      its own would drop every object nothing in it references.

  rondo_headers(name, deps, exclude)
      The workspace's own headers reachable from the cc_library `deps`
      (transitively, so private helper libraries such as
      //nmad/strategies:strategy need no visibility change), minus anything
      under an `internal/` directory and the paths listed in `exclude`.

  rondo_install(name, bins, libs, headers, pkgconfig, version, soversion,
                bin_templates)
      An sh_binary `name` running tools/install.sh, plus its manifest
      `name.manifest` (one line per thing to install; see install.sh).
      bins go to bin/, bin_templates (scripts `X.in`, @VERSION@ filled here,
      @PREFIX@, @CC@ and @CXX@ at install time) to bin/X, libs to lib/ as lib*.so.<soversion> with a lib*.so
      symlink, headers to include/rondo/<workspace path>, pkg-config
      templates (*.pc.in, @VERSION@ filled here, @PREFIX@ at install time)
      to lib/pkgconfig/.
"""

def _whole_archive_impl(ctx):
    cc_toolchain = ctx.attr._cc_toolchain[cc_common.CcToolchainInfo]
    features = cc_common.configure_features(
        ctx = ctx,
        cc_toolchain = cc_toolchain,
        requested_features = ctx.features,
        unsupported_features = ctx.disabled_features,
    )
    merged = cc_common.merge_cc_infos(cc_infos = [d[CcInfo] for d in ctx.attr.deps])
    inputs = []
    for li in merged.linking_context.linker_inputs.to_list():
        libraries = li.libraries
        if li.owner.workspace_name == "":
            # This workspace's libraries: every object, even those nothing in
            # the shared library itself references (its whole public API).
            libraries = [
                cc_common.create_library_to_link(
                    actions = ctx.actions,
                    feature_configuration = features,
                    cc_toolchain = cc_toolchain,
                    static_library = lib.static_library,
                    pic_static_library = lib.pic_static_library,
                    alwayslink = True,
                )
                for lib in li.libraries
                if lib.static_library or lib.pic_static_library
            ]
        inputs.append(cc_common.create_linker_input(
            owner = li.owner,
            libraries = depset(libraries),
            user_link_flags = depset(li.user_link_flags),
            additional_inputs = depset(li.additional_inputs),
        ))
    return [CcInfo(
        compilation_context = merged.compilation_context,
        linking_context = cc_common.create_linking_context(
            linker_inputs = depset(inputs, order = "topological"),
        ),
    )]

_whole_archive = rule(
    implementation = _whole_archive_impl,
    attrs = {
        "deps": attr.label_list(providers = [CcInfo]),
        "_cc_toolchain": attr.label(default = "@bazel_tools//tools/cpp:current_cc_toolchain"),
    },
    fragments = ["cpp"],
    doc = "deps, with this workspace's libraries linked whole (alwayslink).",
)

def rondo_shared_library(name, deps, soversion, visibility = None):
    lib = "lib%s.so" % name
    _whole_archive(
        name = lib + "_whole_archive",
        deps = deps,
    )
    native.cc_binary(
        name = lib,
        linkshared = True,
        # -Bsymbolic-functions: the library's calls to its own functions
        # bind inside it, as direct calls, not through the PLT (see
        # docs/performance.md for the measurement).
        linkopts = [
            "-Wl,-soname,%s.%s" % (lib, soversion),
            "-Wl,-Bsymbolic-functions",
        ],
        deps = [":%s_whole_archive" % lib],
        visibility = visibility,
    )

def _is_internal(path):
    return path.startswith("internal/") or "/internal/" in path

def _rondo_headers_impl(ctx):
    excluded = {p: True for p in ctx.attr.exclude}
    known = {}
    out = []
    for dep in ctx.attr.deps:
        for h in dep[CcInfo].compilation_context.headers.to_list():
            # Only this workspace's sources: not external repositories
            # (hwloc, boost...), not generated files.
            if h.owner.workspace_name != "" or not h.is_source:
                continue
            path = h.short_path
            if path in known:
                continue
            known[path] = True
            if path not in excluded and not _is_internal(path):
                out.append(h)
    stale = [p for p in ctx.attr.exclude if p not in known]
    if stale:
        fail("exclude lists headers that no dep provides: %s" % ", ".join(stale))
    return [DefaultInfo(files = depset(sorted(out, key = _short_path)))]

rondo_headers = rule(
    implementation = _rondo_headers_impl,
    attrs = {
        "deps": attr.label_list(providers = [CcInfo]),
        "exclude": attr.string_list(doc = "Workspace-rooted header paths not to install."),
    },
    doc = "Public headers of the workspace reachable from deps.",
)

def _short_path(f):
    return f.short_path

# Manifest sources are runfiles paths (<workspace>/<path>); destinations are
# relative to the prefix.
def _src(ctx, f):
    return ctx.workspace_name + "/" + f.short_path

def _manifest_impl(ctx):
    lines = []
    runfiles = []

    # The compiler that builds Rondo, a hint for the compiler wrappers
    # (install.sh checks it and derives the C++ one). Bazel's auto-configured
    # toolchain names an absolute path (/usr/bin/gcc); anything else, or a
    # path the manifest cannot hold, leaves install.sh to search PATH.
    compiler = ctx.attr._cc_toolchain[cc_common.CcToolchainInfo].compiler_executable
    if compiler.startswith("/") and " " not in compiler:
        lines.append("compiler - %s -" % compiler)

    for target in ctx.attr.bins:
        exe = target[DefaultInfo].files_to_run.executable
        lines.append("file 755 %s bin/%s" % (_src(ctx, exe), exe.basename))
        runfiles.append(exe)

    for target in ctx.attr.libs:
        for lib in target[DefaultInfo].files.to_list():
            if not lib.basename.endswith(".so"):
                continue
            versioned = "%s.%s" % (lib.basename, ctx.attr.soversion)
            lines.append("file 755 %s lib/%s" % (_src(ctx, lib), versioned))
            lines.append("link - %s lib/%s" % (versioned, lib.basename))
            runfiles.append(lib)

    for target in ctx.attr.headers:
        for h in target[DefaultInfo].files.to_list():
            lines.append("file 644 %s include/rondo/%s" % (_src(ctx, h), h.short_path))
            runfiles.append(h)

    for template in ctx.files.pkgconfig:
        if not template.basename.endswith(".pc.in"):
            fail("pkgconfig: %s is not a .pc.in template" % template.short_path)
        pc = ctx.actions.declare_file("%s.pkgconfig/%s" % (ctx.label.name, template.basename))
        ctx.actions.expand_template(
            template = template,
            output = pc,
            substitutions = {"@VERSION@": ctx.attr.version},
        )
        lines.append("template 644 %s lib/pkgconfig/%s" % (_src(ctx, pc), template.basename[:-len(".in")]))
        runfiles.append(pc)

    for script in ctx.files.bin_templates:
        if not script.basename.endswith(".in"):
            fail("bin_templates: %s is not a .in template" % script.short_path)
        out = ctx.actions.declare_file("%s.bin/%s" % (ctx.label.name, script.basename))
        ctx.actions.expand_template(
            template = script,
            output = out,
            substitutions = {"@VERSION@": ctx.attr.version},
        )
        lines.append("template 755 %s bin/%s" % (_src(ctx, out), script.basename[:-len(".in")]))
        runfiles.append(out)

    for line in lines:
        if len(line.split(" ")) != 4:
            fail("install manifest: a path contains a space: %s" % line)

    manifest = ctx.actions.declare_file(ctx.attr.out)
    ctx.actions.write(manifest, "\n".join(lines) + "\n")
    return [DefaultInfo(
        files = depset([manifest]),
        runfiles = ctx.runfiles(files = [manifest] + runfiles),
    )]

_rondo_install_manifest = rule(
    implementation = _manifest_impl,
    attrs = {
        "bin_templates": attr.label_list(allow_files = [".in"]),
        "bins": attr.label_list(cfg = "target"),
        "headers": attr.label_list(allow_files = True),
        "libs": attr.label_list(cfg = "target"),
        "out": attr.string(mandatory = True),
        "pkgconfig": attr.label_list(allow_files = [".pc.in"]),
        "soversion": attr.string(mandatory = True),
        "version": attr.string(mandatory = True),
        "_cc_toolchain": attr.label(default = "@bazel_tools//tools/cpp:current_cc_toolchain"),
    },
)

def rondo_install(name, bins, libs, headers, pkgconfig, version, soversion, bin_templates = [], visibility = None):
    _rondo_install_manifest(
        name = name + "_manifest",
        out = name + ".manifest",
        bins = bins,
        bin_templates = bin_templates,
        libs = libs,
        headers = headers,
        pkgconfig = pkgconfig,
        version = version,
        soversion = soversion,
    )

    # install.sh finds its manifest next to itself: <name>.manifest.
    native.sh_binary(
        name = name,
        srcs = ["//tools:install.sh"],
        data = [":" + name + "_manifest"],
        visibility = visibility,
    )
