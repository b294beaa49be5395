package resolvers

import (
	"strings"

	"github.com/forkgraph/forkgraph/access"
	"github.com/forkgraph/forkgraph/models"
)

// viewerOf is the API view of a caller.
func viewerOf(p access.Principal) *models.Viewer {
	v := &models.Viewer{Credential: credentialKind(p.Source), Scopes: []models.Scope{}}
	for _, s := range p.Scopes.List() {
		v.Scopes = append(v.Scopes, models.Scope(strings.ToUpper(string(s))))
	}
	if p.Open() {
		return v
	}
	v.Subject, v.Name = &p.Subject, &p.Name
	v.Workspaces = append([]string{}, p.Workspaces...)
	if !p.ExpiresAt.IsZero() {
		exp := p.ExpiresAt
		v.ExpiresAt = &exp
	}
	return v
}

func credentialKind(s access.Source) models.CredentialKind {
	switch s {
	case access.SourceToken:
		return models.CredentialKindToken
	case access.SourceJWT:
		return models.CredentialKindJwt
	}
	return models.CredentialKindOpen
}
