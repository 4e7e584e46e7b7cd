package catalog

import (
	"fmt"
	"sort"
	"strings"
)

// ProviderName names a server provider.
type ProviderName string

// Descriptor is everything benchmatrix knows about a provider before
// starting a server with it. Each provider is described once, in its own
// file (provider_*.go); nothing else switches on its name.
type Descriptor struct {
	Name ProviderName
	// Doc is one line for help texts.
	Doc string
	// Keys are the [server] keys the provider reads besides provider,
	// schema and config (which every provider reads).
	Keys []string
	// Caps are its capabilities.
	Caps Set
	// DefaultImage is the image used when the manifest names none
	// (providers with Images).
	DefaultImage string
	// Required are [server] keys that must be given (or their flag), with
	// the message that says how.
	Required map[string]string
	// Owns are server variables the provider sets itself, with why a
	// manifest may not set them.
	Owns map[string]string
}

// Reads reports whether the provider reads the [server] key.
func (d Descriptor) Reads(key string) bool {
	for _, k := range d.Keys {
		if k == key {
			return true
		}
	}
	return false
}

// providers is the fixed table of descriptors, one per provider_*.go file.
var providers = map[ProviderName]Descriptor{
	Sandbox:  sandboxProvider,
	Docker:   dockerProvider,
	External: externalProvider,
}

// Provider returns the descriptor of a known provider (the zero Descriptor
// for an unknown name; use Lookup to tell).
func Provider(name ProviderName) Descriptor { return providers[name] }

// Lookup returns the descriptor of a provider, or an error naming the
// known ones.
func Lookup(name string) (Descriptor, error) {
	d, ok := providers[ProviderName(name)]
	if !ok {
		return Descriptor{}, fmt.Errorf("unknown provider %q (%s)", name, strings.Join(ProviderNames(), ", "))
	}
	return d, nil
}

// ProviderNames lists the known providers, the default first.
func ProviderNames() []string {
	var out []string
	for n := range providers {
		if n != DefaultProvider {
			out = append(out, string(n))
		}
	}
	sort.Strings(out)
	return append([]string{string(DefaultProvider)}, out...)
}

// DefaultProvider is the provider of a manifest that names none.
const DefaultProvider = Sandbox
