"""Finding 4: views passed to a kernel, and what the kernel receives compiled compared with eager.

A written argument that is a view gets `clone_preserve_strides`: a copy of its storage from the
start to the end of the view, reinterpreted at the same offset and strides. Inductor lowers that
copy's `as_strided` against whatever buffer it realised for the view; when that buffer is the view
alone, the copy reads past it (pytorch issues 192219 / 192226, found in Liger-Kernel's fused linear
cross entropy): the kernel starts from memory that was never the tensor's, and what it does not
overwrite comes back wrong. Evidence: the final graph's clone (`hazards.clone_sources`), Inductor's
lowering (`hazards.overreads`), the AOT node's tensors and the compiled launch's arguments.
"""

from __future__ import annotations

from tritoninspect.analyse.hazards._common import (
    Launch,
    arg,
    joined,
    launch_text,
    launches,
    size_text,
    torch_evidence,
    torch_version,
    view_text,
)
from tritoninspect.model.hazard_records import CloneSource, StorageOverread
from tritoninspect.model.records import Capture, KernelRecord
from tritoninspect.model.report import Evidence, Finding

RULE = "view_clone_overread"
NOTE_RULE = "view_args"

BASIS = ("torch clones a written view with clone_preserve_strides: as_strided(view, [offset + extent], [1], 0), "
         "cloned, then viewed at the same offset. That storage offset is relative to the view's whole storage, "
         "but Inductor's as_strided lowering applies it to the buffer it realised, which can hold the view alone.")
CITE = ("torch/_inductor/fx_passes/post_grad.py (decompose_triton_kernel_wrapper_functional); torch/_inductor/utils.py "
        "(clone_preserve_strides); torch/_inductor/lowering.py (as_strided); pytorch/pytorch#192219, "
        "pytorch/pytorch#192226 (closed), pytorch/pytorch#192227 (an extent check, closed); linkedin/Liger-Kernel#1338")
VERSIONS = ("seen on torch 2.13 (CPU: Inductor's lowering reads 32 elements of a 16-element buffer; compiled differs "
            "from eager); torch 2.11: see the GPU test")


def view_args(capture: Capture) -> list[Finding]:
    findings = []
    for record in capture.kernels.values():
        every = launches(capture, record)
        copies = [(lau, cs) for lau in every for cs in _sources(capture, lau) if _copies_more(cs)]
        overread = [(lau, cs, o) for lau, cs in copies for o in _overreads(capture, lau, cs)]
        if overread:
            findings.append(_overread_finding(capture, record, overread, every))
        elif copies:
            findings.append(_copy_note(capture, record, copies))
    return findings


def _sources(capture: Capture, launch: Launch) -> list[CloneSource]:
    if launch.final is None:
        return []
    return [cs for cs in capture.hazards.clone_sources if cs.compile_id == launch.compile_id
            and cs.part == launch.part and cs.node == launch.final.node]


def _copies_more(cs: CloneSource) -> bool:
    return bool(cs.view_offset) or (cs.copied_elements or 0) > (cs.view_elements or 0)


def _overreads(capture: Capture, launch: Launch, cs: CloneSource) -> list[StorageOverread]:
    return [o for o in capture.hazards.overreads if o.compile_id == launch.compile_id and o.part == launch.part
            and o.node == cs.as_strided]


def _eager_text(launch: Launch, param: str) -> str:
    a = arg(launch.eager, param) if launch.eager is not None else None
    return view_text(a) if a is not None else "a view"


def _overread_finding(capture: Capture, record: KernelRecord, overread: list, every: list[Launch]) -> Finding:  # type: ignore[type-arg]
    launch, cs, o = overread[0]
    params = tuple(dict.fromkeys(cs.param for _, cs, _ in overread))
    evidence = []
    for lau, src, over in overread:
        evidence += [
            Evidence("graph node", f"{launch_text(lau)}: eager passes {src.param} as {_eager_text(lau, src.param)}",
                     compile_id=lau.compile_id, stage=lau.node.stage, node=lau.node.node, param=src.param),
            Evidence("graph node", f"the final graph copies {src.param} with {src.as_strided} = as_strided({src.source}, "
                     f"[{src.copied_elements}], [1], 0): {src.copied_elements} elements for a view of "
                     f"{src.view_elements}", compile_id=lau.compile_id, stage="post_grad_final",
                     node=lau.final.node if lau.final else None, param=src.param),
            Evidence("lowering", f"Inductor lowers {over.node} to a view needing {over.needed} elements of "
                     f"{over.buffer}, which holds {over.allocated}", compile_id=over.compile_id, node=over.node,
                     param=src.param),
        ]
    hit = len({(lau.compile_id, lau.index) for lau, _, _ in overread})
    summary = (f"{record.name} writes {joined(params)}, a view it gets at a storage offset; compiled, torch gives it "
               f"a copy whose lowering reads past its buffer ({o.needed} elements of {o.buffer}, which holds "
               f"{o.allocated}; {hit} of {len(every)} launches): the kernel starts from memory that was never the "
               "tensor's, and whatever it leaves unwritten comes back wrong.")
    return Finding(
        rule=RULE, severity="error", kernel=record.name, summary=summary,
        action=("Pass the kernel the whole tensor and the view's offset as an argument (index from the base pointer) "
                "instead of the slice; or, where it only writes the slice (never loads it), give it a fresh tensor "
                "(torch.zeros) and copy that into the slice after."),
        evidence=(*evidence, Evidence("kernel source", f"{record.name} is defined here", file=record.file,
                                      line=record.line), torch_evidence(capture)),
        basis=BASIS, cite=CITE, versions=VERSIONS, torch=torch_version(capture),
        compile_ids=tuple(dict.fromkeys(lau.compile_id for lau, _, _ in overread)),
    )


def _copy_note(capture: Capture, record: KernelRecord, copies: list) -> Finding:  # type: ignore[type-arg]
    params = tuple(dict.fromkeys(cs.param for _, cs in copies))
    evidence = [Evidence("graph node", f"{launch_text(lau)}: eager passes {cs.param} as {_eager_text(lau, cs.param)}; "
                         f"compiled it gets a copy of {cs.copied_elements} elements "
                         f"({size_text((cs.copied_elements or 0) * (cs.itemsize or 0))}) at offset {cs.view_offset}",
                         compile_id=lau.compile_id, stage="post_grad_final",
                         node=lau.final.node if lau.final else None, param=cs.param) for lau, cs in copies]
    copied = sum((cs.copied_elements or 0) * (cs.itemsize or 0) for _, cs in copies)
    viewed = sum((cs.view_elements or 0) * (cs.itemsize or 0) for _, cs in copies)
    return Finding(
        rule=NOTE_RULE, severity="note", kernel=record.name,
        summary=(f"{record.name} writes {joined(params)}, a view at a storage offset: compiled it gets a copy of its "
                 f"storage up to the view's end ({size_text(copied)} copied for {size_text(viewed)} of views); "
                 "Inductor's lowering of those copies stays inside their buffers."),
        action="", evidence=(*evidence, torch_evidence(capture)), basis=BASIS, cite=CITE,
        torch=torch_version(capture), compile_ids=tuple(dict.fromkeys(lau.compile_id for lau, _ in copies)),
    )
