"""The forgiving order language of mail: order lines to actions, with suggestions."""
