"""A structural check of a QTI 1.2 package: the content models and attributes of the IMS QTI ASI
1.2 DTD (ims_qtiasiv1p2) for every element seqlab writes, and the IMS content-packaging manifest.

No XSD or DTD validator can be had here (no lxml, no xmllint), so the DTD's declarations for these
elements are written out below as they stand in the specification, turned into regular
expressions over each element's children, and every element of a package is checked against
them: an element the table does not know, a child out of the order the DTD gives, a required
attribute missing or an enumerated one out of its values is a failure naming the path.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

QTI_NS = "http://www.imsglobal.org/xsd/ims_qtiasiv1p2"
CP_NS = "http://www.imsglobal.org/xsd/imsccv1p1/imscp_v1p1"

_CONDITIONS = (
    "not | and | or | unanswered | other | varequal | varlt | varlte | vargt | vargte | varsubset | varinside"
    " | varsubstring | durequal | durlt | durlte | durgt | durgte"
)
# <!ELEMENT name (content model)> of the ASI DTD, for the elements a seqlab package can hold
CONTENT = {
    "questestinterop": "(qticomment? , (objectbank | assessment | (section | item)+))",
    "assessment": "(qticomment? , duration? , qtimetadata* , objectives* , assessmentcontrol* , rubric* ,"
    " presentation_material? , outcomes_processing* , assessproc_extension? , assessfeedback* ,"
    " selection_ordering? , reference? , (sectionref | section)+)",
    "section": "(qticomment? , duration? , qtimetadata* , objectives* , sectioncontrol* , sectionprecondition* ,"
    " sectionpostcondition* , rubric* , presentation_material? , outcomes_processing* ,"
    " sectionproc_extension? , sectionfeedback* , selection_ordering? , reference? ,"
    " (itemref | item | sectionref | section)*)",
    "selection_ordering": "(qticomment? , sequence_parameter* , selection* , order?)",
    "selection": "(sourcebank_ref? , selection_number? , selection_metadata? ,"
    " (and_selection | or_selection | not_selection | selection_extension)?)",
    "item": "(qticomment? , duration? , itemmetadata? , objectives* , itemcontrol* , itemprecondition* ,"
    " itempostcondition* , (itemrubric | rubric)* , presentation? , resprocessing* , itemproc_extension? ,"
    " itemfeedback* , reference?)",
    "itemmetadata": "(qtimetadata* , qmd_computerscored? , qmd_feedbackpermitted? , qmd_hintspermitted? ,"
    " qmd_itemtype? , qmd_levelofdifficulty? , qmd_maximumscore? , qmd_renderingtype* , qmd_responsetype* ,"
    " qmd_scoringpermitted? , qmd_solutionspermitted? , qmd_status? , qmd_timedependence? , qmd_timelimit? ,"
    " qmd_toolvendor? , qmd_topic? , qmd_weighting? , qmd_material* , qmd_typeofsolution?)",
    "qtimetadata": "(vocabulary? , qtimetadatafield+)",
    "qtimetadatafield": "(fieldlabel , fieldentry)",
    "presentation": "(qticomment? , (flow | (material | response_lid | response_xy | response_str | response_num"
    " | response_grp | response_extension)+))",
    "material": "(qticomment? , (mattext | matemtext | matimage | mataudio | matvideo | matapplet | matapplication"
    " | matref | matbreak | mat_extension)+ , altmaterial*)",
    "response_lid": "((material | material_ref)? , (render_choice | render_hotspot | render_slider | render_fib"
    " | render_extension) , (material | material_ref)?)",
    "response_str": "((material | material_ref)? , (render_choice | render_hotspot | render_slider | render_fib"
    " | render_extension) , (material | material_ref)?)",
    "render_choice": "((material | material_ref | response_label | flow_label)* , response_na?)",
    "render_fib": "((material | material_ref | response_label | flow_label)* , response_na?)",
    "response_label": "(qticomment | material | material_ref | flow_mat)*",
    "resprocessing": "(qticomment? , outcomes , (respcondition | itemproc_extension)+)",
    "outcomes": "(qticomment? , (decvar , interpretvar*)+)",
    "respcondition": "(qticomment? , conditionvar , setvar* , displayfeedback* , respcond_extension?)",
    "conditionvar": f"({_CONDITIONS} | var_extension)+",
    "and": f"({_CONDITIONS})+",
    "or": f"({_CONDITIONS})+",
    "not": f"({_CONDITIONS})",
}
TEXT_ONLY = {"mattext", "fieldlabel", "fieldentry", "selection_number", "decvar", "setvar", "varequal"}
TEXT_ONLY |= {"vargte", "varlte"}
ANY = {"selection_extension"}  # <!ELEMENT selection_extension ANY>
REQUIRED = {
    "assessment": {"ident"},
    "section": {"ident"},
    "item": {"ident"},
    "response_lid": {"ident"},
    "response_str": {"ident"},
    "response_label": {"ident"},
    "varequal": {"respident"},
    "vargte": {"respident"},
    "varlte": {"respident"},
}
ENUMERATED = {
    ("response_lid", "rcardinality"): {"Single", "Multiple", "Ordered"},
    ("response_str", "rcardinality"): {"Single", "Multiple", "Ordered"},
    ("render_fib", "fibtype"): {"String", "Integer", "Decimal", "Scientific"},
    ("decvar", "vartype"): {"Integer", "String", "Decimal", "Scientific", "Boolean", "Enumerated", "Set"},
    ("setvar", "action"): {"Set", "Add", "Subtract", "Multiply", "Divide"},
    ("respcondition", "continue"): {"Yes", "No"},
}


def _regex(model: str) -> re.Pattern[str]:
    """A DTD content model as a regular expression over ``<child>`` tags in a row."""
    out = re.sub(r"[a-z_]+", lambda m: f"(?:<{m.group(0)}>)", model)
    return re.compile(out.replace(" ", "").replace(",", "").replace("(", "(?:").replace("(?:?:", "(?:"))


MODELS = {name: _regex(model) for name, model in CONTENT.items()}


def _local(tag: str, ns: str) -> str:
    assert tag.startswith(f"{{{ns}}}"), f"{tag}: not in the namespace {ns}"
    return tag[len(ns) + 2 :]


def qti_problems(xml: bytes) -> list[str]:
    """Every way ``xml`` (one quiz) departs from the DTD's models for the elements it holds."""
    root = ET.fromstring(xml)
    problems: list[str] = []

    def walk(element: ET.Element, path: str) -> None:
        name = _local(element.tag, QTI_NS)
        here = f"{path}/{name}[{element.get('ident', '')}]" if element.get("ident") else f"{path}/{name}"
        problems.extend(f"{here}: no {a}" for a in REQUIRED.get(name, ()) if not element.get(a))
        for (owner, attribute), allowed in ENUMERATED.items():
            if owner == name and element.get(attribute) is not None and element.get(attribute) not in allowed:
                problems.append(f"{here}: {attribute}={element.get(attribute)!r} is none of {sorted(allowed)}")
        children = list(element)
        if name in ANY:
            return
        if name in TEXT_ONLY:
            if children:
                problems.append(f"{here}: holds elements, the DTD gives it text only")
            return
        model = MODELS.get(name)
        if model is None:
            problems.append(f"{here}: an element this check does not know (add its DTD model)")
            return
        row = "".join(f"<{_local(c.tag, QTI_NS)}>" for c in children)
        if not model.fullmatch(row):
            problems.append(f"{here}: children {row or '(none)'} do not fit {CONTENT[name]}")
        for child in children:
            walk(child, here)

    walk(root, "")
    return problems


def manifest_problems(xml: bytes, names: set[str]) -> list[str]:
    """The IMS content-packaging manifest: organizations then resources, every resource a QTI 1.2
    file that is in the zip (``names``), and every file of the zip but the manifest listed."""
    root = ET.fromstring(xml)
    problems = []
    if _local(root.tag, CP_NS) != "manifest" or not root.get("identifier"):
        problems.append("the root is no manifest with an identifier")
    kids = [_local(c.tag, CP_NS) for c in root]
    if kids not in (["organizations", "resources"], ["metadata", "organizations", "resources"]):
        problems.append(f"manifest children {kids}: want [metadata,] organizations, resources")
    listed = set()
    for resource in root.iter(f"{{{CP_NS}}}resource"):
        if resource.get("type") != "imsqti_xmlv1p2" or not resource.get("identifier"):
            problems.append(f"resource {resource.attrib}: no identifier or not imsqti_xmlv1p2")
        files = [f.get("href") for f in resource.findall(f"{{{CP_NS}}}file")]
        if resource.get("href") not in files:
            problems.append(f"resource {resource.get('identifier')}: its href is not among its files")
        listed.update(files)
    if listed != names - {"imsmanifest.xml"}:
        problems.append(f"the manifest lists {sorted(listed)}, the zip holds {sorted(names)}")
    return problems
