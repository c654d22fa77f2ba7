"""The `fields` selector, parsed and applied, against Google's own descriptions of it.

Sources, cited beside each expected value:
- [GCS] Cloud Storage JSON API overview, "Partial response":
  https://cloud.google.com/storage/docs/json_api (the syntax summary: comma-separated fields,
  `a/b` nesting, `a(b,c)` sub-selection, `*`);
- [DRIVE] Drive API, "Return specific fields":
  https://developers.google.com/drive/api/guides/fields-parameter ("Use a comma-separated list to
  select multiple fields, such as 'name, mimeType'", "'permissions(id)' returns only the
  permission ID for each element in the permissions array", "an asterisk as a wild card ...
  to return all fields in an object", and a refused selection's 400: "Invalid field
  selection canAddChildren").
"""

from __future__ import annotations

import json

import pytest
from starlette.responses import JSONResponse, Response

from vertexkit.local.errors import ApiError
from vertexkit.local.partial_response import parse, requested, select, trimmed, without_fields

FILE = {
    "kind": "drive#file",
    "id": "f1",
    "name": "report",
    "mimeType": "text/plain",
    "capabilities": {"canDownload": True, "canEdit": False},
    "permissions": [
        {"id": "p1", "role": "owner", "permissionDetails": [{"role": "owner", "inherited": False}]},
        {"id": "p2", "role": "reader"},
    ],
}


def test_a_comma_separated_list_selects_those_fields_spaces_allowed() -> None:
    # [DRIVE] "Use a comma-separated list to select multiple fields, such as 'name, mimeType'."
    assert select(FILE, parse("name, mimeType")) == {"name": "report", "mimeType": "text/plain"}


def test_a_slash_selects_a_nested_field_inside_its_parent_only() -> None:
    # [DRIVE] "Use a/b to select field b that's nested within field a, such as
    # 'capabilities/canDownload'."
    expected = {"capabilities": {"canDownload": True}}
    assert select(FILE, parse("capabilities/canDownload")) == expected


def test_a_sub_selection_applies_to_each_element_of_an_array() -> None:
    # [DRIVE] "'permissions(id)' returns only the permission ID for each element in the
    # permissions array."
    assert select(FILE, parse("permissions(id)")) == {"permissions": [{"id": "p1"}, {"id": "p2"}]}
    # [DRIVE] "files.get with fields=permissions(role) or fields=permissions/role": the same
    assert parse("permissions(role)") == parse("permissions/role")


def test_a_wildcard_selects_every_field_at_its_level() -> None:
    # [DRIVE] "'permissions/permissionDetails/*' selects all available permission details
    # fields per permission."
    assert select(FILE, parse("permissions/permissionDetails/*")) == {
        "permissions": [{"permissionDetails": [{"role": "owner", "inherited": False}]}, {}]
    }
    assert select(FILE, parse("*")) == FILE
    # `*/x`: x of every field that has one
    nested = {"pagemap": {"a": {"title": "A", "x": 1}, "b": {"x": 2}, "c": {"title": "C"}}}
    assert select(nested, parse("pagemap/*/title")) == {
        "pagemap": {"a": {"title": "A"}, "b": {}, "c": {"title": "C"}}
    }


def test_sub_selections_nest_and_paths_combine_as_a_union() -> None:
    job = {
        "name": "j",
        "state": "RUNNING",
        "jobDetail": {
            "pipelineContext": {"name": "c"},
            "taskDetails": [
                {"taskId": "1", "state": "RUNNING", "inputs": {"x": 1},
                 "execution": {"name": "e", "metadata": {"k": "v"}}},
                {"taskId": "2", "state": "PENDING"},
            ],
        },
    }  # fmt: skip
    selector = "state,jobDetail/taskDetails(taskId,state,execution/metadata)"
    assert select(job, parse(selector)) == {
        "state": "RUNNING",
        "jobDetail": {
            "taskDetails": [
                {"taskId": "1", "state": "RUNNING", "execution": {"metadata": {"k": "v"}}},
                {"taskId": "2", "state": "PENDING"},
            ]
        },
    }
    # the same field named twice: the union of both selections; all of it wins over a part
    assert parse("a(b),a/c") == {"a": {"b": None, "c": None}}
    assert parse("a/b,a") == {"a": None} == parse("a,a/b")
    assert select(job, parse("*,jobDetail/pipelineContext")) == job


def test_the_answer_keeps_the_resource_s_order_not_the_selector_s() -> None:
    assert list(select(FILE, parse("name,id,kind"))) == ["kind", "id", "name"]


def test_a_field_the_answer_lacks_selects_nothing_there() -> None:
    assert select(FILE, parse("name,nextPageToken")) == {"name": "report"}
    assert select({"items": []}, parse("items(name)")) == {"items": []}
    assert select({}, parse("items(name),nextPageToken")) == {}
    # an object selected into stays, even with nothing in it selected
    assert select(FILE, parse("capabilities/canComment")) == {"capabilities": {}}
    # a scalar selected into, and an array of scalars, is left out
    assert select(FILE, parse("name/first,id")) == {"id": "f1"}
    assert select({"args": ["a", "b"]}, parse("args/x")) == {}


def test_no_selector_or_an_empty_one_is_the_whole_answer() -> None:
    assert requested({}) is None
    assert requested({"fields": ""}) is None
    assert select(FILE, requested({"fields": "  "})) is FILE
    assert requested({"fields": "name"}) == {"name": None}


@pytest.mark.parametrize(
    "selector",
    ["name,", ",name", "a/", "/a", "a//b", "a()", "a(b", "a(b))", "a)b", "(a)", "a(b)c",
     "a b", "na*me", "a,,b"],
)  # fmt: skip
def test_a_selector_that_does_not_parse_is_a_400_naming_it(selector: str) -> None:
    # [DRIVE] "If the fields parameter has an error or is otherwise invalid, the server returns
    # an HTTP 400 Bad Request status code, along with an error message stating what's wrong
    # with your fields selection", e.g. "Invalid field selection canAddChildren" (a name its
    # schema lacks). A syntax error's exact wording is not on record: the same shape, naming
    # the whole selector, is this module's choice.
    with pytest.raises(ApiError) as raised:
        requested({"fields": selector})
    assert raised.value.code == 400
    assert raised.value.status == "INVALID_ARGUMENT"
    assert raised.value.message == f"Invalid field selection {selector}"


def test_handlers_never_see_the_system_parameter() -> None:
    assert without_fields({"fields": "name", "pageSize": "2"}) == {"pageSize": "2"}


def test_a_rendered_json_answer_is_trimmed_and_its_length_follows() -> None:
    answer = trimmed(JSONResponse(FILE, headers={"etag": "e"}), parse("id"))
    assert json.loads(answer.body) == {"id": "f1"}
    assert answer.headers["content-length"] == str(len(answer.body))
    assert answer.headers["etag"] == "e"
    error = JSONResponse({"error": {"code": 404}}, status_code=404)
    assert trimmed(error, parse("id")).body == error.body
    media = Response(json.dumps(FILE).encode(), media_type="application/json")
    assert trimmed(media, parse("id")).body == media.body  # a download's own bytes


def test_a_kept_key_stays_in_every_object_selected_into() -> None:
    response = {"@type": "type.googleapis.com/x.Dataset", "name": "d", "etag": "e"}
    operation = {"name": "o", "done": True, "response": response}
    assert select(operation, parse("response/name"), keep="@type") == {
        "response": {"@type": "type.googleapis.com/x.Dataset", "name": "d"}
    }
    assert select(operation, parse("response/name")) == {"response": {"name": "d"}}
