// The CLI; see CommandLineTool.swift.
