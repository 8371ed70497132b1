/** Generated from `schema/` by `cargo run -p opencode-pty-codegen` (`just codegen`): do not edit by hand. The bundled schema with its validation rules and without annotations, for the client's runtime checks. */

/** Every definition of the bundled schema (JSON Schema draft-07, local `#/definitions/...` references). */
export const SCHEMA_DEFINITIONS: Readonly<Record<string, unknown>> = {
  "Envelope": {
    "properties": {
      "request": {
        "$ref": "#/definitions/Request"
      },
      "token": {
        "type": "string"
      }
    },
    "required": [
      "token",
      "request"
    ],
    "type": "object"
  },
  "InputWait": {
    "enum": [
      "prompt",
      "password",
      "line",
      "key"
    ],
    "type": "string"
  },
  "Lifecycle": {
    "oneOf": [
      {
        "properties": {
          "status": {
            "const": "running",
            "type": "string"
          }
        },
        "required": [
          "status"
        ],
        "type": "object"
      },
      {
        "properties": {
          "exit_code": {
            "maximum": 4294967295,
            "minimum": 0,
            "type": [
              "integer",
              "null"
            ]
          },
          "signal": {
            "type": "string"
          },
          "status": {
            "const": "exited",
            "type": "string"
          }
        },
        "required": [
          "status",
          "exit_code"
        ],
        "type": "object"
      },
      {
        "properties": {
          "message": {
            "type": "string"
          },
          "status": {
            "const": "failed",
            "type": "string"
          }
        },
        "required": [
          "status",
          "message"
        ],
        "type": "object"
      }
    ]
  },
  "Mode": {
    "enum": [
      "pty",
      "pipe"
    ],
    "type": "string"
  },
  "OptIn": {
    "enum": [
      "commands",
      "input"
    ],
    "type": "string"
  },
  "OutputFrame": {
    "properties": {
      "data_base64": {
        "type": "string"
      },
      "end": {
        "maximum": 9007199254740991,
        "minimum": 0,
        "type": "integer"
      },
      "start": {
        "maximum": 9007199254740991,
        "minimum": 0,
        "type": "integer"
      },
      "type": {
        "const": "output",
        "type": "string"
      }
    },
    "required": [
      "type",
      "start",
      "end",
      "data_base64"
    ],
    "type": "object"
  },
  "PipeInfo": {
    "properties": {
      "metadata": {
        "additionalProperties": true,
        "type": "object"
      },
      "output_error": {
        "type": "string"
      },
      "output_lines": {
        "maximum": 9007199254740991,
        "minimum": 0,
        "type": "integer"
      },
      "output_path": {
        "type": "string"
      }
    },
    "required": [
      "output_path",
      "output_lines",
      "metadata"
    ],
    "type": "object"
  },
  "ProcessInfo": {
    "allOf": [
      {
        "else": {
          "not": {
            "required": [
              "pty"
            ]
          },
          "required": [
            "pipe"
          ]
        },
        "if": {
          "properties": {
            "mode": {
              "const": "pty"
            }
          }
        },
        "then": {
          "not": {
            "required": [
              "pipe"
            ]
          },
          "required": [
            "pty"
          ]
        }
      }
    ],
    "properties": {
      "command": {
        "items": {
          "type": "string"
        },
        "type": "array"
      },
      "cwd": {
        "type": "string"
      },
      "exited_at": {
        "maximum": 9007199254740991,
        "minimum": 0,
        "type": [
          "integer",
          "null"
        ]
      },
      "group_id": {
        "type": "string"
      },
      "id": {
        "maximum": 9007199254740991,
        "minimum": 0,
        "type": "integer"
      },
      "lifecycle": {
        "$ref": "#/definitions/Lifecycle"
      },
      "mode": {
        "$ref": "#/definitions/Mode"
      },
      "output_head": {
        "maximum": 9007199254740991,
        "minimum": 0,
        "type": "integer"
      },
      "output_tail": {
        "maximum": 9007199254740991,
        "minimum": 0,
        "type": "integer"
      },
      "pid": {
        "maximum": 4294967295,
        "minimum": 0,
        "type": [
          "integer",
          "null"
        ]
      },
      "pipe": {
        "$ref": "#/definitions/PipeInfo"
      },
      "pty": {
        "$ref": "#/definitions/PtyInfo"
      },
      "started_at": {
        "maximum": 9007199254740991,
        "minimum": 0,
        "type": "integer"
      }
    },
    "required": [
      "id",
      "mode",
      "pid",
      "command",
      "cwd",
      "group_id",
      "lifecycle",
      "output_head",
      "output_tail",
      "started_at",
      "exited_at"
    ],
    "type": "object"
  },
  "PtyInfo": {
    "properties": {
      "alternate_screen": {
        "type": "boolean"
      },
      "cols": {
        "maximum": 1000,
        "minimum": 1,
        "type": "integer"
      },
      "foreground_process": {
        "type": [
          "string",
          "null"
        ]
      },
      "input": {
        "oneOf": [
          {
            "$ref": "#/definitions/InputWait"
          },
          {
            "type": "null"
          }
        ]
      },
      "rows": {
        "maximum": 1000,
        "minimum": 1,
        "type": "integer"
      },
      "shell": {
        "$ref": "#/definitions/ShellState"
      },
      "title": {
        "allOf": [
          {
            "maxLength": 256
          }
        ],
        "type": "string"
      },
      "user_title": {
        "allOf": [
          {
            "maxLength": 256
          }
        ],
        "type": [
          "string",
          "null"
        ]
      }
    },
    "required": [
      "title",
      "user_title",
      "foreground_process",
      "cols",
      "rows"
    ],
    "type": "object"
  },
  "Registration": {
    "properties": {
      "features": {
        "items": {
          "type": "string"
        },
        "type": "array"
      },
      "instance_id": {
        "allOf": [
          {
            "pattern": "^[0-9a-f]{32}$"
          }
        ],
        "type": "string"
      },
      "pid": {
        "maximum": 4294967295,
        "minimum": 0,
        "type": "integer"
      },
      "protocol": {
        "maximum": 4294967295,
        "minimum": 0,
        "type": "integer"
      },
      "socket": {
        "type": "string"
      },
      "token": {
        "allOf": [
          {
            "pattern": "^[0-9a-f]{32}$"
          }
        ],
        "type": "string"
      }
    },
    "required": [
      "instance_id",
      "pid",
      "protocol",
      "features",
      "socket",
      "token"
    ],
    "type": "object"
  },
  "Request": {
    "oneOf": [
      {
        "properties": {
          "op": {
            "const": "ping",
            "type": "string"
          }
        },
        "required": [
          "op"
        ],
        "type": "object"
      },
      {
        "properties": {
          "instance_id": {
            "type": "string"
          },
          "op": {
            "const": "own",
            "type": "string"
          },
          "ticket": {
            "type": [
              "string",
              "null"
            ]
          }
        },
        "required": [
          "op",
          "instance_id"
        ],
        "type": "object"
      },
      {
        "properties": {
          "op": {
            "const": "prepare_handoff",
            "type": "string"
          }
        },
        "required": [
          "op"
        ],
        "type": "object"
      },
      {
        "properties": {
          "args": {
            "allOf": [
              {
                "maxItems": 4096
              }
            ],
            "items": {
              "allOf": [
                {
                  "maxLength": 131072
                }
              ],
              "type": "string"
            },
            "type": "array"
          },
          "cols": {
            "maximum": 1000,
            "minimum": 1,
            "type": "integer"
          },
          "cwd": {
            "allOf": [
              {
                "maxLength": 4096
              }
            ],
            "type": "string"
          },
          "env": {
            "additionalProperties": {
              "type": "string"
            },
            "type": "object"
          },
          "group_id": {
            "allOf": [
              {
                "maxLength": 256
              }
            ],
            "type": "string"
          },
          "op": {
            "const": "create_pty",
            "type": "string"
          },
          "program": {
            "allOf": [
              {
                "maxLength": 4096
              }
            ],
            "type": "string"
          },
          "replay_bytes": {
            "maximum": 67108864,
            "minimum": 4096,
            "type": [
              "integer",
              "null"
            ]
          },
          "rows": {
            "maximum": 1000,
            "minimum": 1,
            "type": "integer"
          },
          "scrollback_lines": {
            "maximum": 100000,
            "minimum": 0,
            "type": [
              "integer",
              "null"
            ]
          },
          "shell_integration": {
            "type": "boolean"
          },
          "title": {
            "allOf": [
              {
                "maxLength": 256
              }
            ],
            "type": "string"
          }
        },
        "required": [
          "op",
          "program",
          "args",
          "cwd",
          "env",
          "group_id",
          "title",
          "cols",
          "rows"
        ],
        "type": "object"
      },
      {
        "properties": {
          "args": {
            "allOf": [
              {
                "maxItems": 4096
              }
            ],
            "items": {
              "allOf": [
                {
                  "maxLength": 131072
                }
              ],
              "type": "string"
            },
            "type": "array"
          },
          "cwd": {
            "allOf": [
              {
                "maxLength": 4096
              }
            ],
            "type": "string"
          },
          "env": {
            "additionalProperties": {
              "type": "string"
            },
            "type": "object"
          },
          "group_id": {
            "allOf": [
              {
                "maxLength": 256
              }
            ],
            "type": "string"
          },
          "metadata": {
            "additionalProperties": true,
            "type": "object"
          },
          "op": {
            "const": "create_pipe",
            "type": "string"
          },
          "output_path": {
            "allOf": [
              {
                "maxLength": 4096
              }
            ],
            "type": "string"
          },
          "program": {
            "allOf": [
              {
                "maxLength": 4096
              }
            ],
            "type": "string"
          }
        },
        "required": [
          "op",
          "program",
          "args",
          "cwd",
          "env",
          "group_id",
          "output_path"
        ],
        "type": "object"
      },
      {
        "properties": {
          "after": {
            "maximum": 9007199254740991,
            "minimum": 0,
            "type": "integer"
          },
          "features": {
            "allOf": [
              {
                "maxItems": 8
              }
            ],
            "items": {
              "$ref": "#/definitions/OptIn"
            },
            "type": "array"
          },
          "limit": {
            "minimum": 1,
            "type": "integer"
          },
          "mode": {
            "$ref": "#/definitions/Mode"
          },
          "op": {
            "const": "list",
            "type": "string"
          }
        },
        "required": [
          "op",
          "mode"
        ],
        "type": "object"
      },
      {
        "properties": {
          "features": {
            "allOf": [
              {
                "maxItems": 8
              }
            ],
            "items": {
              "$ref": "#/definitions/OptIn"
            },
            "type": "array"
          },
          "id": {
            "maximum": 9007199254740991,
            "minimum": 0,
            "type": "integer"
          },
          "op": {
            "const": "get",
            "type": "string"
          }
        },
        "required": [
          "op",
          "id"
        ],
        "type": "object"
      },
      {
        "properties": {
          "id": {
            "maximum": 9007199254740991,
            "minimum": 0,
            "type": "integer"
          },
          "op": {
            "const": "wait",
            "type": "string"
          }
        },
        "required": [
          "op",
          "id"
        ],
        "type": "object"
      },
      {
        "properties": {
          "id": {
            "maximum": 9007199254740991,
            "minimum": 0,
            "type": "integer"
          },
          "op": {
            "const": "signal",
            "type": "string"
          },
          "signal": {
            "$ref": "#/definitions/Signal"
          }
        },
        "required": [
          "op",
          "id",
          "signal"
        ],
        "type": "object"
      },
      {
        "properties": {
          "id": {
            "maximum": 9007199254740991,
            "minimum": 0,
            "type": "integer"
          },
          "metadata": {
            "additionalProperties": true,
            "type": "object"
          },
          "op": {
            "const": "set_metadata",
            "type": "string"
          }
        },
        "required": [
          "op",
          "id",
          "metadata"
        ],
        "type": "object"
      },
      {
        "properties": {
          "attachment_id": {
            "allOf": [
              {
                "maxLength": 256
              }
            ],
            "type": [
              "string",
              "null"
            ]
          },
          "data_base64": {
            "type": "string"
          },
          "id": {
            "maximum": 9007199254740991,
            "minimum": 0,
            "type": "integer"
          },
          "op": {
            "const": "write",
            "type": "string"
          }
        },
        "required": [
          "op",
          "id",
          "attachment_id",
          "data_base64"
        ],
        "type": "object"
      },
      {
        "properties": {
          "attachment_id": {
            "allOf": [
              {
                "maxLength": 256
              }
            ],
            "type": [
              "string",
              "null"
            ]
          },
          "cols": {
            "maximum": 1000,
            "minimum": 1,
            "type": "integer"
          },
          "id": {
            "maximum": 9007199254740991,
            "minimum": 0,
            "type": "integer"
          },
          "op": {
            "const": "resize",
            "type": "string"
          },
          "rows": {
            "maximum": 1000,
            "minimum": 1,
            "type": "integer"
          }
        },
        "required": [
          "op",
          "id",
          "attachment_id",
          "cols",
          "rows"
        ],
        "type": "object"
      },
      {
        "properties": {
          "attachment_id": {
            "allOf": [
              {
                "maxLength": 256
              }
            ],
            "type": "string"
          },
          "cols": {
            "maximum": 1000,
            "minimum": 1,
            "type": "integer"
          },
          "id": {
            "maximum": 9007199254740991,
            "minimum": 0,
            "type": "integer"
          },
          "op": {
            "const": "control",
            "type": "string"
          },
          "rows": {
            "maximum": 1000,
            "minimum": 1,
            "type": "integer"
          }
        },
        "required": [
          "op",
          "id",
          "attachment_id",
          "cols",
          "rows"
        ],
        "type": "object"
      },
      {
        "properties": {
          "attachment_id": {
            "allOf": [
              {
                "maxLength": 256
              }
            ],
            "type": "string"
          },
          "cols": {
            "maximum": 1000,
            "minimum": 1,
            "type": "integer"
          },
          "data_base64": {
            "type": "string"
          },
          "id": {
            "maximum": 9007199254740991,
            "minimum": 0,
            "type": "integer"
          },
          "op": {
            "const": "input",
            "type": "string"
          },
          "rows": {
            "maximum": 1000,
            "minimum": 1,
            "type": "integer"
          }
        },
        "required": [
          "op",
          "id",
          "attachment_id",
          "cols",
          "rows",
          "data_base64"
        ],
        "type": "object"
      },
      {
        "properties": {
          "features": {
            "allOf": [
              {
                "maxItems": 8
              }
            ],
            "items": {
              "$ref": "#/definitions/OptIn"
            },
            "type": "array"
          },
          "id": {
            "maximum": 9007199254740991,
            "minimum": 0,
            "type": "integer"
          },
          "op": {
            "const": "snapshot",
            "type": "string"
          }
        },
        "required": [
          "op",
          "id"
        ],
        "type": "object"
      },
      {
        "properties": {
          "features": {
            "allOf": [
              {
                "maxItems": 8
              }
            ],
            "items": {
              "$ref": "#/definitions/OptIn"
            },
            "type": "array"
          },
          "id": {
            "maximum": 9007199254740991,
            "minimum": 0,
            "type": "integer"
          },
          "op": {
            "const": "read_rows",
            "type": "string"
          },
          "rows": {
            "maximum": 65535,
            "minimum": 1,
            "type": [
              "integer",
              "null"
            ]
          }
        },
        "required": [
          "op",
          "id"
        ],
        "type": "object"
      },
      {
        "properties": {
          "id": {
            "maximum": 9007199254740991,
            "minimum": 0,
            "type": "integer"
          },
          "op": {
            "const": "rename",
            "type": "string"
          },
          "title": {
            "allOf": [
              {
                "maxLength": 256
              }
            ],
            "type": [
              "string",
              "null"
            ]
          }
        },
        "required": [
          "op",
          "id",
          "title"
        ],
        "type": "object"
      },
      {
        "properties": {
          "id": {
            "maximum": 9007199254740991,
            "minimum": 0,
            "type": "integer"
          },
          "offset": {
            "maximum": 9007199254740991,
            "minimum": 0,
            "type": "integer"
          },
          "op": {
            "const": "replay",
            "type": "string"
          }
        },
        "required": [
          "op",
          "id",
          "offset"
        ],
        "type": "object"
      },
      {
        "properties": {
          "attachment_id": {
            "allOf": [
              {
                "maxLength": 256
              }
            ],
            "type": "string"
          },
          "events": {
            "allOf": [
              {
                "maxItems": 8
              }
            ],
            "items": {
              "$ref": "#/definitions/OptIn"
            },
            "type": "array"
          },
          "id": {
            "maximum": 9007199254740991,
            "minimum": 0,
            "type": "integer"
          },
          "offset": {
            "maximum": 9007199254740991,
            "minimum": 0,
            "type": "integer"
          },
          "op": {
            "const": "subscribe",
            "type": "string"
          },
          "role": {
            "$ref": "#/definitions/Role"
          },
          "takeover": {
            "type": "boolean"
          }
        },
        "required": [
          "op",
          "id",
          "offset",
          "attachment_id",
          "role",
          "takeover"
        ],
        "type": "object"
      },
      {
        "properties": {
          "id": {
            "maximum": 9007199254740991,
            "minimum": 0,
            "type": "integer"
          },
          "op": {
            "const": "terminate",
            "type": "string"
          }
        },
        "required": [
          "op",
          "id"
        ],
        "type": "object"
      },
      {
        "properties": {
          "op": {
            "const": "shutdown",
            "type": "string"
          }
        },
        "required": [
          "op"
        ],
        "type": "object"
      },
      {
        "properties": {
          "id": {
            "maximum": 9007199254740991,
            "minimum": 0,
            "type": "integer"
          },
          "limit": {
            "maximum": 256,
            "minimum": 1,
            "type": [
              "integer",
              "null"
            ]
          },
          "op": {
            "const": "commands",
            "type": "string"
          }
        },
        "required": [
          "op",
          "id"
        ],
        "type": "object"
      },
      {
        "properties": {
          "command": {
            "allOf": [
              {
                "maxLength": 65536
              }
            ],
            "type": "string"
          },
          "id": {
            "maximum": 9007199254740991,
            "minimum": 0,
            "type": "integer"
          },
          "op": {
            "const": "run",
            "type": "string"
          },
          "timeout_ms": {
            "maximum": 86400000,
            "minimum": 0,
            "type": [
              "integer",
              "null"
            ]
          }
        },
        "required": [
          "op",
          "id",
          "command"
        ],
        "type": "object"
      },
      {
        "properties": {
          "command_id": {
            "maximum": 9007199254740991,
            "minimum": 0,
            "type": "integer"
          },
          "id": {
            "maximum": 9007199254740991,
            "minimum": 0,
            "type": "integer"
          },
          "op": {
            "const": "wait_command",
            "type": "string"
          },
          "timeout_ms": {
            "maximum": 86400000,
            "minimum": 0,
            "type": [
              "integer",
              "null"
            ]
          }
        },
        "required": [
          "op",
          "id",
          "command_id"
        ],
        "type": "object"
      },
      {
        "properties": {
          "op": {
            "const": "upgrade",
            "type": "string"
          },
          "program": {
            "allOf": [
              {
                "maxLength": 4096
              }
            ],
            "type": [
              "string",
              "null"
            ]
          }
        },
        "required": [
          "op"
        ],
        "type": "object"
      }
    ]
  },
  "Response": {
    "oneOf": [
      {
        "properties": {
          "features": {
            "items": {
              "type": "string"
            },
            "type": "array"
          },
          "instance_id": {
            "type": "string"
          },
          "pid": {
            "maximum": 4294967295,
            "minimum": 0,
            "type": "integer"
          },
          "protocol": {
            "maximum": 4294967295,
            "minimum": 0,
            "type": "integer"
          },
          "type": {
            "const": "pong",
            "type": "string"
          }
        },
        "required": [
          "type",
          "instance_id",
          "pid",
          "protocol",
          "features"
        ],
        "type": "object"
      },
      {
        "properties": {
          "type": {
            "const": "owned",
            "type": "string"
          }
        },
        "required": [
          "type"
        ],
        "type": "object"
      },
      {
        "properties": {
          "expires_at": {
            "maximum": 9007199254740991,
            "minimum": 0,
            "type": "integer"
          },
          "ticket": {
            "type": "string"
          },
          "type": {
            "const": "handoff",
            "type": "string"
          }
        },
        "required": [
          "type",
          "ticket",
          "expires_at"
        ],
        "type": "object"
      },
      {
        "properties": {
          "process": {
            "$ref": "#/definitions/ProcessInfo"
          },
          "type": {
            "const": "created",
            "type": "string"
          }
        },
        "required": [
          "type",
          "process"
        ],
        "type": "object"
      },
      {
        "properties": {
          "next": {
            "maximum": 9007199254740991,
            "minimum": 0,
            "type": "integer"
          },
          "processes": {
            "items": {
              "$ref": "#/definitions/ProcessInfo"
            },
            "type": "array"
          },
          "type": {
            "const": "processes",
            "type": "string"
          }
        },
        "required": [
          "type",
          "processes"
        ],
        "type": "object"
      },
      {
        "properties": {
          "process": {
            "$ref": "#/definitions/ProcessInfo"
          },
          "type": {
            "const": "process",
            "type": "string"
          }
        },
        "required": [
          "type",
          "process"
        ],
        "type": "object"
      },
      {
        "properties": {
          "type": {
            "const": "ok",
            "type": "string"
          }
        },
        "required": [
          "type"
        ],
        "type": "object"
      },
      {
        "properties": {
          "message": {
            "type": "string"
          },
          "type": {
            "const": "error",
            "type": "string"
          }
        },
        "required": [
          "type",
          "message"
        ],
        "type": "object"
      },
      {
        "properties": {
          "checkpoint_base64": {
            "type": "string"
          },
          "cursor_x": {
            "maximum": 65535,
            "minimum": 0,
            "type": "integer"
          },
          "cursor_y": {
            "maximum": 65535,
            "minimum": 0,
            "type": "integer"
          },
          "process": {
            "$ref": "#/definitions/ProcessInfo"
          },
          "text": {
            "type": "string"
          },
          "type": {
            "const": "snapshot",
            "type": "string"
          }
        },
        "required": [
          "type",
          "process",
          "text",
          "checkpoint_base64",
          "cursor_x",
          "cursor_y"
        ],
        "type": "object"
      },
      {
        "properties": {
          "cursor_x": {
            "maximum": 65535,
            "minimum": 0,
            "type": "integer"
          },
          "cursor_y": {
            "maximum": 65535,
            "minimum": 0,
            "type": "integer"
          },
          "lines": {
            "items": {
              "type": "string"
            },
            "type": "array"
          },
          "process": {
            "$ref": "#/definitions/ProcessInfo"
          },
          "type": {
            "const": "rows",
            "type": "string"
          }
        },
        "required": [
          "type",
          "process",
          "lines",
          "cursor_x",
          "cursor_y"
        ],
        "type": "object"
      },
      {
        "properties": {
          "available_offset": {
            "maximum": 9007199254740991,
            "minimum": 0,
            "type": "integer"
          },
          "data_base64": {
            "type": "string"
          },
          "end_offset": {
            "maximum": 9007199254740991,
            "minimum": 0,
            "type": "integer"
          },
          "requested_offset": {
            "maximum": 9007199254740991,
            "minimum": 0,
            "type": "integer"
          },
          "truncated": {
            "type": "boolean"
          },
          "type": {
            "const": "replay",
            "type": "string"
          }
        },
        "required": [
          "type",
          "requested_offset",
          "available_offset",
          "end_offset",
          "truncated",
          "data_base64"
        ],
        "type": "object"
      },
      {
        "properties": {
          "available_offset": {
            "maximum": 9007199254740991,
            "minimum": 0,
            "type": "integer"
          },
          "end_offset": {
            "maximum": 9007199254740991,
            "minimum": 0,
            "type": "integer"
          },
          "generation": {
            "maximum": 9007199254740991,
            "minimum": 0,
            "type": "integer"
          },
          "process": {
            "$ref": "#/definitions/ProcessInfo"
          },
          "replay_base64": {
            "type": "string"
          },
          "requested_offset": {
            "maximum": 9007199254740991,
            "minimum": 0,
            "type": "integer"
          },
          "role": {
            "$ref": "#/definitions/Role"
          },
          "truncated": {
            "type": "boolean"
          },
          "type": {
            "const": "attached",
            "type": "string"
          }
        },
        "required": [
          "type",
          "process",
          "role",
          "generation",
          "requested_offset",
          "available_offset",
          "end_offset",
          "truncated",
          "replay_base64"
        ],
        "type": "object"
      },
      {
        "properties": {
          "checkpoint_base64": {
            "type": "string"
          },
          "cols": {
            "maximum": 1000,
            "minimum": 1,
            "type": "integer"
          },
          "generation": {
            "maximum": 9007199254740991,
            "minimum": 0,
            "type": "integer"
          },
          "rows": {
            "maximum": 1000,
            "minimum": 1,
            "type": "integer"
          },
          "type": {
            "const": "resized",
            "type": "string"
          }
        },
        "required": [
          "type",
          "cols",
          "rows",
          "generation",
          "checkpoint_base64"
        ],
        "type": "object"
      },
      {
        "properties": {
          "attachment_id": {
            "type": [
              "string",
              "null"
            ]
          },
          "generation": {
            "maximum": 9007199254740991,
            "minimum": 0,
            "type": "integer"
          },
          "type": {
            "const": "controller_changed",
            "type": "string"
          }
        },
        "required": [
          "type",
          "attachment_id",
          "generation"
        ],
        "type": "object"
      },
      {
        "properties": {
          "title": {
            "allOf": [
              {
                "maxLength": 256
              }
            ],
            "type": "string"
          },
          "type": {
            "const": "title_changed",
            "type": "string"
          }
        },
        "required": [
          "type",
          "title"
        ],
        "type": "object"
      },
      {
        "properties": {
          "process": {
            "type": [
              "string",
              "null"
            ]
          },
          "type": {
            "const": "foreground_process_changed",
            "type": "string"
          }
        },
        "required": [
          "type",
          "process"
        ],
        "type": "object"
      },
      {
        "properties": {
          "input": {
            "oneOf": [
              {
                "$ref": "#/definitions/InputWait"
              },
              {
                "type": "null"
              }
            ]
          },
          "type": {
            "const": "input_changed",
            "type": "string"
          }
        },
        "required": [
          "type",
          "input"
        ],
        "type": "object"
      },
      {
        "properties": {
          "exit_code": {
            "maximum": 4294967295,
            "minimum": 0,
            "type": [
              "integer",
              "null"
            ]
          },
          "exited_at": {
            "maximum": 9007199254740991,
            "minimum": 0,
            "type": "integer"
          },
          "final_offset": {
            "maximum": 9007199254740991,
            "minimum": 0,
            "type": "integer"
          },
          "output_error": {
            "type": "string"
          },
          "output_lines": {
            "maximum": 9007199254740991,
            "minimum": 0,
            "type": "integer"
          },
          "signal": {
            "type": "string"
          },
          "type": {
            "const": "exited",
            "type": "string"
          }
        },
        "required": [
          "type",
          "exit_code",
          "final_offset",
          "exited_at"
        ],
        "type": "object"
      },
      {
        "properties": {
          "commands": {
            "allOf": [
              {
                "maxItems": 256
              }
            ],
            "items": {
              "$ref": "#/definitions/ShellCommand"
            },
            "type": "array"
          },
          "process": {
            "$ref": "#/definitions/ProcessInfo"
          },
          "type": {
            "const": "commands",
            "type": "string"
          }
        },
        "required": [
          "type",
          "process",
          "commands"
        ],
        "type": "object"
      },
      {
        "properties": {
          "command": {
            "allOf": [
              {
                "maxLength": 4096
              }
            ],
            "type": "string"
          },
          "command_id": {
            "maximum": 9007199254740991,
            "minimum": 0,
            "type": "integer"
          },
          "cwd": {
            "allOf": [
              {
                "maxLength": 4096
              }
            ],
            "type": [
              "string",
              "null"
            ]
          },
          "output_start": {
            "maximum": 9007199254740991,
            "minimum": 0,
            "type": "integer"
          },
          "type": {
            "const": "command_started",
            "type": "string"
          }
        },
        "required": [
          "type",
          "command_id",
          "command",
          "cwd",
          "output_start"
        ],
        "type": "object"
      },
      {
        "properties": {
          "command_id": {
            "maximum": 9007199254740991,
            "minimum": 0,
            "type": "integer"
          },
          "exit_code": {
            "maximum": 4294967295,
            "minimum": 0,
            "type": [
              "integer",
              "null"
            ]
          },
          "output_end": {
            "maximum": 9007199254740991,
            "minimum": 0,
            "type": "integer"
          },
          "output_start": {
            "maximum": 9007199254740991,
            "minimum": 0,
            "type": "integer"
          },
          "text": {
            "type": "string"
          },
          "truncated": {
            "type": "boolean"
          },
          "type": {
            "const": "command_finished",
            "type": "string"
          }
        },
        "required": [
          "type",
          "command_id",
          "exit_code",
          "output_start",
          "output_end"
        ],
        "type": "object"
      },
      {
        "properties": {
          "command_id": {
            "maximum": 9007199254740991,
            "minimum": 0,
            "type": "integer"
          },
          "output_start": {
            "maximum": 9007199254740991,
            "minimum": 0,
            "type": [
              "integer",
              "null"
            ]
          },
          "type": {
            "const": "command_running",
            "type": "string"
          }
        },
        "required": [
          "type",
          "command_id",
          "output_start"
        ],
        "type": "object"
      }
    ]
  },
  "Role": {
    "enum": [
      "controller",
      "observer"
    ],
    "type": "string"
  },
  "ShellCommand": {
    "properties": {
      "command": {
        "allOf": [
          {
            "maxLength": 4096
          }
        ],
        "type": "string"
      },
      "command_id": {
        "maximum": 9007199254740991,
        "minimum": 0,
        "type": "integer"
      },
      "cwd": {
        "allOf": [
          {
            "maxLength": 4096
          }
        ],
        "type": [
          "string",
          "null"
        ]
      },
      "exit_code": {
        "maximum": 4294967295,
        "minimum": 0,
        "type": [
          "integer",
          "null"
        ]
      },
      "finished_at": {
        "maximum": 9007199254740991,
        "minimum": 0,
        "type": [
          "integer",
          "null"
        ]
      },
      "output_end": {
        "maximum": 9007199254740991,
        "minimum": 0,
        "type": [
          "integer",
          "null"
        ]
      },
      "output_start": {
        "maximum": 9007199254740991,
        "minimum": 0,
        "type": "integer"
      },
      "started_at": {
        "maximum": 9007199254740991,
        "minimum": 0,
        "type": "integer"
      }
    },
    "required": [
      "command_id",
      "command",
      "cwd",
      "output_start",
      "output_end",
      "exit_code",
      "started_at",
      "finished_at"
    ],
    "type": "object"
  },
  "ShellState": {
    "properties": {
      "command_id": {
        "maximum": 9007199254740991,
        "minimum": 0,
        "type": [
          "integer",
          "null"
        ]
      },
      "cwd": {
        "allOf": [
          {
            "maxLength": 4096
          }
        ],
        "type": [
          "string",
          "null"
        ]
      },
      "state": {
        "enum": [
          "starting",
          "prompt",
          "running"
        ],
        "type": "string"
      }
    },
    "required": [
      "state",
      "command_id",
      "cwd"
    ],
    "type": "object"
  },
  "Signal": {
    "enum": [
      "SIGTERM",
      "SIGINT",
      "SIGKILL"
    ],
    "type": "string"
  }
};
