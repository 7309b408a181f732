// The store shell; see Store.swift.
