#!/usr/bin/python3
"""jsonschema.py - a small JSON Schema validator for tcx's tests, with the
standard library only (no python3-jsonschema on the CI machine).

Usage: jsonschema.py SCHEMA [DOCUMENT]   (DOCUMENT defaults to stdin)
Exit status: 0 valid, 1 invalid (each problem printed with its JSON path),
2 a schema that uses a keyword this validator does not know, or bad usage.

It supports the subset of draft-07 that share/schemas/ uses: type (a name or
a list; "integer" excludes booleans and floats with a fraction), properties,
required, additionalProperties (false or a schema), items (one schema),
enum, const, minimum, exclusiveMinimum, maximum, pattern, minItems, and
$ref to "#/definitions/NAME".  Annotations ($schema, $id, title,
description, $comment, definitions, examples, default) are ignored.  Any
other keyword is an error, so that a schema never seems to check something
it does not.
"""
import json
import re
import sys

ANNOTATIONS = {"$schema", "$id", "title", "description", "$comment", "definitions",
               "examples", "default"}
KEYWORDS = {"type", "properties", "required", "additionalProperties", "items", "enum",
            "const", "minimum", "exclusiveMinimum", "maximum", "pattern", "minItems",
            "$ref"} | ANNOTATIONS


class SchemaError(Exception):
    pass


def type_ok(value, name):
    if name == "object":
        return isinstance(value, dict)
    if name == "array":
        return isinstance(value, list)
    if name == "string":
        return isinstance(value, str)
    if name == "boolean":
        return isinstance(value, bool)
    if name == "null":
        return value is None
    if name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if name == "integer":
        if isinstance(value, bool):
            return False
        return isinstance(value, int) or (isinstance(value, float) and value.is_integer())
    raise SchemaError(f"unknown type '{name}'")


def same(a, b):
    """JSON equality: true is not 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return a == b


class Validator:
    def __init__(self, root):
        self.root = root
        self.errors = []

    def resolve(self, ref):
        if not ref.startswith("#/definitions/"):
            raise SchemaError(f"unsupported $ref '{ref}' (only #/definitions/NAME)")
        name = ref[len("#/definitions/"):]
        try:
            return self.root["definitions"][name]
        except KeyError:
            raise SchemaError(f"$ref '{ref}' names no definition")

    def fail(self, path, msg):
        self.errors.append(f"{path or '$'}: {msg}")

    def check(self, value, schema, path):
        if schema is True or schema == {}:
            return
        if schema is False:
            self.fail(path, "no value is allowed here")
            return
        if not isinstance(schema, dict):
            raise SchemaError(f"{path}: a schema must be an object")
        unknown = set(schema) - KEYWORDS
        if unknown:
            raise SchemaError(f"schema at {path or '$'} uses unsupported keywords: "
                              + ", ".join(sorted(unknown)))
        if "$ref" in schema:
            self.check(value, self.resolve(schema["$ref"]), path)
        if "type" in schema:
            names = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
            if not any(type_ok(value, n) for n in names):
                self.fail(path, f"{json.dumps(value)[:60]} is not of type {' or '.join(names)}")
                return
        if "enum" in schema and not any(same(value, e) for e in schema["enum"]):
            self.fail(path, f"{json.dumps(value)[:60]} is not one of {schema['enum']}")
        if "const" in schema and not same(value, schema["const"]):
            self.fail(path, f"{json.dumps(value)[:60]} is not {json.dumps(schema['const'])}")
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if number and "minimum" in schema and value < schema["minimum"]:
            self.fail(path, f"{value} is less than the minimum {schema['minimum']}")
        if number and "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
            self.fail(path, f"{value} is not more than {schema['exclusiveMinimum']}")
        if number and "maximum" in schema and value > schema["maximum"]:
            self.fail(path, f"{value} is more than the maximum {schema['maximum']}")
        if isinstance(value, str) and "pattern" in schema and \
                not re.search(schema["pattern"], value):
            self.fail(path, f"'{value[:60]}' does not match /{schema['pattern']}/")
        if isinstance(value, dict):
            props = schema.get("properties", {})
            for key in schema.get("required", []):
                if key not in value:
                    self.fail(path, f"required key '{key}' is missing")
            for key, v in value.items():
                if key in props:
                    self.check(v, props[key], f"{path}.{key}")
                elif "additionalProperties" in schema:
                    extra = schema["additionalProperties"]
                    if extra is False:
                        self.fail(path, f"key '{key}' is not in the schema")
                    else:
                        self.check(v, extra, f"{path}.{key}")
        if isinstance(value, list):
            if "minItems" in schema and len(value) < schema["minItems"]:
                self.fail(path, f"{len(value)} items, fewer than {schema['minItems']}")
            if "items" in schema:
                for k, v in enumerate(value):
                    self.check(v, schema["items"], f"{path}[{k}]")


def main(argv):
    if len(argv) not in (2, 3):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        schema = json.load(f)
    try:
        if len(argv) == 3:
            with open(argv[2]) as f:
                doc = json.load(f)
        else:
            doc = json.load(sys.stdin)
    except json.JSONDecodeError as e:
        print(f"not JSON: {e}")
        return 1
    v = Validator(schema)
    try:
        v.check(doc, schema, "")
    except SchemaError as e:
        print(f"{argv[1]}: {e}", file=sys.stderr)
        return 2
    for e in v.errors:
        print(e)
    return 1 if v.errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
